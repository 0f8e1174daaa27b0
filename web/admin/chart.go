// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// The dashboard's charts are SVG drawn on the server: no script, no
// inline style (the CSP forbids both), only presentation attributes and
// classes of the embedded stylesheet.

// Bar is one bar of a bar chart.
type Bar struct {
	// Label names the bar in its tooltip ("2025-05-01 13:00 UTC").
	Label string
	// Tick, when set, is written under the bar on the x axis.
	Tick  string
	Value int
}

// Chart is a bar chart.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	// Unit follows the value in tooltips ("certificates").
	Unit string
	Bars []Bar
}

// The chart's geometry, in SVG user units.
const (
	chartW      = 960
	chartH      = 260
	chartLeft   = 56 // room for the y ticks and label
	chartRight  = 12
	chartTop    = 34 // room for the title
	chartBottom = 50 // room for the x ticks and label
)

// niceMax rounds a positive maximum up to 1, 2 or 5 times a power of ten,
// so that the axis ticks (0, half, max) are round numbers.
func niceMax(v int) int {
	if v <= 1 {
		return 1
	}
	for p := 1; p <= math.MaxInt/100; p *= 10 {
		for _, m := range []int{2, 4, 5, 10} {
			if m*p >= v && (m*p)%2 == 0 {
				return m * p
			}
		}
	}
	return v
}

// SVG renders c as an inline SVG bar chart with a title, axis labels, y
// ticks at 0, half and the top, the x ticks the bars carry, and a
// tooltip per bar. Every text is escaped; a chart of zeros says so.
func (c Chart) SVG() template.HTML {
	esc := template.HTMLEscapeString
	var b strings.Builder
	top := 0
	for _, bar := range c.Bars {
		top = max(top, bar.Value)
	}
	ymax := niceMax(top)
	plotW := float64(chartW - chartLeft - chartRight)
	plotH := float64(chartH - chartTop - chartBottom)
	baseY := float64(chartTop) + plotH

	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="100%%" role="img" aria-label="%s">`,
		chartW, chartH, esc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<text class="chart-title" x="%d" y="20" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, chartLeft, esc(c.Title))

	// Grid lines and y ticks at 0, half and the top.
	for _, v := range []int{0, ymax / 2, ymax} {
		if v == 0 && ymax/2 == 0 {
			continue
		}
		y := baseY - plotH*float64(v)/float64(ymax)
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb"/>`, chartLeft, y, chartW-chartRight, y)
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end" font-size="11" fill="#6b7280">%d</text>`, chartLeft-6, y+4, v)
	}
	if ymax/2 == 0 {
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end" font-size="11" fill="#6b7280">0</text>`, chartLeft-6, baseY+4)
	}

	// Bars.
	if n := len(c.Bars); n > 0 {
		slot := plotW / float64(n)
		gap := min(slot*0.2, 4)
		for i, bar := range c.Bars {
			v := max(bar.Value, 0)
			h := plotH * float64(v) / float64(ymax)
			x := float64(chartLeft) + slot*float64(i) + gap/2
			tip := bar.Label + ": " + strconv.Itoa(v)
			if c.Unit != "" {
				tip += " " + c.Unit
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#2563eb" data-value="%d"><title>%s</title></rect>`,
				x, baseY-h, slot-gap, h, v, esc(tip))
			if bar.Tick != "" {
				tx := float64(chartLeft) + slot*float64(i) + slot/2
				fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9ca3af"/>`, tx, baseY, tx, baseY+4)
				fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle" font-size="11" fill="#6b7280">%s</text>`, tx, baseY+17, esc(bar.Tick))
			}
		}
	}
	if top == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%.1f" y="%.1f" text-anchor="middle" font-size="13" fill="#6b7280">nothing in this period</text>`,
			float64(chartLeft)+plotW/2, float64(chartTop)+plotH/2)
	}

	// Axes and their labels.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#9ca3af"/>`, chartLeft, baseY, chartW-chartRight, baseY)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="#9ca3af"/>`, chartLeft, chartTop, chartLeft, baseY)
	if c.XLabel != "" {
		fmt.Fprintf(&b, `<text class="axis-label" x="%.1f" y="%d" text-anchor="middle" font-size="12" fill="#374151">%s</text>`,
			float64(chartLeft)+plotW/2, chartH-8, esc(c.XLabel))
	}
	if c.YLabel != "" {
		cy := float64(chartTop) + plotH/2
		fmt.Fprintf(&b, `<text class="axis-label" x="14" y="%.1f" text-anchor="middle" font-size="12" fill="#374151" transform="rotate(-90 14 %.1f)">%s</text>`,
			cy, cy, esc(c.YLabel))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: every text above is escaped
}

// issuanceChart draws certificates issued per step from from, one bar per
// count, with an x tick every six bars (the date at midnight).
func issuanceChart(from time.Time, step time.Duration, counts []int) Chart {
	c := Chart{
		Title:  fmt.Sprintf("Certificates issued, last %d hours", int(step.Hours()*float64(len(counts)))),
		XLabel: "hour (UTC)", YLabel: "certificates", Unit: "certificates",
	}
	if step <= 0 {
		step = time.Hour
	}
	for i, n := range counts {
		t := from.Add(time.Duration(i) * step).UTC()
		bar := Bar{Label: t.Format("2006-01-02 15:04") + "–" + t.Add(step).Format("15:04") + " UTC", Value: n}
		if i%6 == 0 {
			bar.Tick = t.Format("15:04")
			if t.Hour() == 0 && t.Minute() == 0 {
				bar.Tick = t.Format("Jan 2")
			}
		}
		c.Bars = append(c.Bars, bar)
	}
	return c
}

// meterSVG is a small horizontal bar: remaining out of capacity.
func meterSVG(remaining, capacity int64) template.HTML {
	const w, h = 120, 10
	fill := 0.0
	if capacity > 0 {
		fill = float64(min(max(remaining, 0), capacity)) / float64(capacity)
	}
	color := "#16a34a"
	switch {
	case fill == 0:
		color = "#dc2626"
	case fill < 0.5:
		color = "#d97706"
	}
	return template.HTML(fmt.Sprintf(`<svg class="meter" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%d of %d remaining">`+
		`<rect width="%d" height="%d" rx="2" fill="#e5e7eb"/><rect width="%.1f" height="%d" rx="2" fill="%s"/></svg>`,
		w, h, w, h, remaining, capacity, w, h, fill*w, h, color))
}
