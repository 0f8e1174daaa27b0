// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgElems parses svg as XML and returns every element's name and
// attributes, failing the test when it is not well-formed.
func svgElems(t *testing.T, svg string) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	var out []xml.StartElement
	for range 100000 {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			out = append(out, se.Copy())
		}
	}
	t.Fatal("too many tokens")
	return nil
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestChartSVG(t *testing.T) {
	tests := []struct {
		name       string
		values     []int
		wantTop    int // the top y tick
		wantEmpty  bool
		wantHeight []float64 // bar heights relative to the tallest possible
	}{
		{"zeros", []int{0, 0, 0}, 1, true, []float64{0, 0, 0}},
		{"one", []int{0, 1, 0}, 1, false, []float64{0, 1, 0}},
		{"three rounds up to four", []int{3, 1, 2}, 4, false, []float64{.75, .25, .5}},
		{"seven rounds up to ten", []int{7, 0}, 10, false, []float64{.7, 0}},
		{"exact", []int{20, 10, 5}, 20, false, []float64{1, .5, .25}},
		{"a negative is drawn as zero", []int{-3, 2}, 2, false, []float64{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Chart{Title: "Certs <per> hour", XLabel: "hour", YLabel: "certificates", Unit: "certs"}
			for i, v := range tt.values {
				c.Bars = append(c.Bars, Bar{Label: "bar " + strconv.Itoa(i), Value: v})
			}
			svg := string(c.SVG())
			elems := svgElems(t, svg)
			if elems[0].Name.Local != "svg" || attr(elems[0], "role") != "img" || attr(elems[0], "aria-label") != "Certs <per> hour" {
				t.Errorf("root element %v, want an svg with role img and the title as its label", elems[0])
			}
			var bars []xml.StartElement
			ticks := map[string]bool{}
			for _, e := range elems {
				if e.Name.Local == "rect" && attr(e, "class") == "bar" {
					bars = append(bars, e)
				}
			}
			for _, m := range regexp.MustCompile(`class="tick"[^>]*>([^<]*)<`).FindAllStringSubmatch(svg, -1) {
				ticks[m[1]] = true
			}
			if len(bars) != len(tt.values) {
				t.Fatalf("%d bars, want %d", len(bars), len(tt.values))
			}
			if !ticks[strconv.Itoa(tt.wantTop)] || !ticks["0"] {
				t.Errorf("y ticks %v, want 0 and %d", ticks, tt.wantTop)
			}
			full := float64(chartH - chartTop - chartBottom)
			for i, b := range bars {
				h, _ := strconv.ParseFloat(attr(b, "height"), 64)
				y, _ := strconv.ParseFloat(attr(b, "y"), 64)
				if d := h - tt.wantHeight[i]*full; d > 0.11 || d < -0.11 {
					t.Errorf("bar %d height %.1f, want %.1f", i, h, tt.wantHeight[i]*full)
				}
				if d := y + h - float64(chartTop) - full; d > 0.11 || d < -0.11 {
					t.Errorf("bar %d does not stand on the x axis: y %.1f + height %.1f", i, y, h)
				}
				if want := strconv.Itoa(max(tt.values[i], 0)); attr(b, "data-value") != want {
					t.Errorf("bar %d data-value %q, want %s", i, attr(b, "data-value"), want)
				}
			}
			if got := strings.Contains(svg, "nothing in this period"); got != tt.wantEmpty {
				t.Errorf("empty note shown = %v, want %v", got, tt.wantEmpty)
			}
			for _, want := range []string{"<title>Certs &lt;per&gt; hour</title>", ">hour</text>", ">certificates</text>", "<title>bar 0: "} {
				if !strings.Contains(svg, want) {
					t.Errorf("chart lacks %q", want)
				}
			}
		})
	}
}

// TestChartEscapes: every text that reaches the SVG is escaped, so a
// label cannot inject markup.
func TestChartEscapes(t *testing.T) {
	evil := `<script>alert("x")</script>&`
	c := Chart{Title: evil, XLabel: evil, YLabel: evil, Unit: evil,
		Bars: []Bar{{Label: evil, Tick: evil, Value: 2}, {Label: "ok", Value: 1}}}
	svg := string(c.SVG())
	if strings.Contains(svg, "<script") || strings.Contains(svg, `"x"`) {
		t.Fatalf("unescaped text in the chart:\n%s", svg)
	}
	svgElems(t, svg) // still well-formed
	if n := strings.Count(svg, "&lt;script&gt;"); n < 6 {
		t.Errorf("the label appears escaped %d times, want every text (6)", n)
	}
}

func TestChartNoBars(t *testing.T) {
	svg := string(Chart{Title: "empty"}.SVG())
	svgElems(t, svg)
	if !strings.Contains(svg, "nothing in this period") {
		t.Error("a chart without bars does not say it is empty")
	}
}

func TestChartNiceMax(t *testing.T) {
	for v, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 4, 4: 4, 5: 10, 9: 10, 11: 20, 21: 40, 41: 50, 51: 100, 101: 200, 999: 1000} {
		if got := niceMax(v); got != want {
			t.Errorf("niceMax(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestChartIssuance(t *testing.T) {
	from := time.Date(2025, 5, 1, 18, 0, 0, 0, time.UTC)
	counts := make([]int, 48)
	counts[47] = 5
	c := issuanceChart(from, time.Hour, counts)
	if c.Title != "Certificates issued, last 48 hours" {
		t.Errorf("title %q", c.Title)
	}
	if len(c.Bars) != 48 {
		t.Fatalf("%d bars, want 48", len(c.Bars))
	}
	// Ticks every six hours; midnight shows the date.
	wantTicks := map[int]string{0: "18:00", 6: "May 2", 12: "06:00", 18: "12:00", 42: "12:00"}
	for i, want := range wantTicks {
		if c.Bars[i].Tick != want {
			t.Errorf("bar %d tick %q, want %q", i, c.Bars[i].Tick, want)
		}
	}
	if c.Bars[1].Tick != "" {
		t.Errorf("bar 1 has tick %q, want none", c.Bars[1].Tick)
	}
	if want := "2025-05-03 17:00–18:00 UTC"; c.Bars[47].Label != want || c.Bars[47].Value != 5 {
		t.Errorf("last bar %+v, want label %q and value 5", c.Bars[47], want)
	}
	svg := string(c.SVG())
	svgElems(t, svg)
	if !strings.Contains(svg, "2025-05-03 17:00–18:00 UTC: 5 certificates") {
		t.Error("the last bar's tooltip is missing")
	}
}

func TestChartMeter(t *testing.T) {
	tests := []struct {
		rem, capacity int64
		width         string
		color         string
	}{
		{10, 10, "120.0", "#16a34a"},
		{0, 10, "0.0", "#dc2626"},
		{3, 10, "36.0", "#d97706"},
		{5, 0, "0.0", "#dc2626"},
		{20, 10, "120.0", "#16a34a"},
	}
	for _, tt := range tests {
		svg := string(meterSVG(tt.rem, tt.capacity))
		elems := svgElems(t, svg)
		fill := elems[len(elems)-1]
		if attr(fill, "width") != tt.width || attr(fill, "fill") != tt.color {
			t.Errorf("meter(%d, %d): fill width %s color %s, want %s %s", tt.rem, tt.capacity, attr(fill, "width"), attr(fill, "fill"), tt.width, tt.color)
		}
		if !strings.Contains(svg, strconv.FormatInt(tt.rem, 10)+" of "+strconv.FormatInt(tt.capacity, 10)+" remaining") {
			t.Errorf("meter(%d, %d) lacks its label: %s", tt.rem, tt.capacity, svg)
		}
	}
}
