// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"errors"
	"testing"
	"time"
)

// TestTimeDest: NULL and 0 scan as the zero time, any other integer as
// those Unix nanoseconds in UTC, and what is no integer is refused.
func TestTimeDest(t *testing.T) {
	at := time.Date(2031, 3, 4, 5, 6, 7, 891011123, time.UTC)
	for _, tc := range []struct {
		src     any
		want    time.Time
		wantErr bool
	}{
		{nil, time.Time{}, false},
		{int64(0), time.Time{}, false},
		{at.UnixNano(), at, false},
		{int64(-1), time.Unix(0, -1).UTC(), false},
		{"1", time.Time{}, true},
		{[]byte("1"), time.Time{}, true},
	} {
		got := time.Unix(1, 0) // overwritten by every scan
		err := nanos(&got).Scan(tc.src)
		if (err != nil) != tc.wantErr || err == nil && !got.Equal(tc.want) || err == nil && got.Location() != time.UTC {
			t.Errorf("Scan(%#v) = %v, %v; want %v, error %v", tc.src, got, err, tc.want, tc.wantErr)
		}
	}
}

// fakeRows is a result set of rows of values.
type fakeRows struct {
	rows [][]any
	i    int
	err  error
}

func (f *fakeRows) Next() bool { f.i++; return f.i <= len(f.rows) }
func (f *fakeRows) Err() error { return f.err }
func (f *fakeRows) Scan(dest ...any) error {
	row := f.rows[f.i-1]
	if len(dest) != len(row) {
		return errors.New("wrong number of columns")
	}
	for i, d := range dest {
		*d.(*int64) = row[i].(int64)
	}
	return nil
}

// TestCollectWithSeq: Collect reads every row; WithSeq takes the
// leading column; a failed scan or result set is the driver's error.
func TestCollectWithSeq(t *testing.T) {
	type row struct{ seq, v int64 }
	scan := func(s Scanner) (row, error) {
		var r row
		err := WithSeq(s, &r.seq).Scan(&r.v)
		return r, err
	}
	got, err := Collect(Driver("sqlite"), "list", &fakeRows{rows: [][]any{{int64(2), int64(20)}, {int64(1), int64(10)}}}, scan)
	if err != nil || len(got) != 2 || got[0] != (row{2, 20}) || got[1] != (row{1, 10}) {
		t.Errorf("Collect = %v, %v; want [{2 20} {1 10}]", got, err)
	}
	cause := errors.New("reset")
	if _, err := Collect(Driver("sqlite"), "list", &fakeRows{err: cause}, scan); !errors.Is(err, cause) || err.Error() != "sqlite: list: reset" {
		t.Errorf("Collect of a failed result set = %v; want sqlite: list: reset", err)
	}
	if _, err := Collect(Driver("sqlite"), "list", &fakeRows{rows: [][]any{{int64(1)}}}, scan); err == nil {
		t.Error("Collect of a row that does not scan = nil error")
	}
}
