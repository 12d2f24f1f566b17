package window

import (
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse("15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	w := Tumbling{Size: time.Minute, Grace: 30 * time.Second}
	for _, c := range []struct {
		stream, at string
		want       Verdict
		after      string
	}{
		{"12:04:10", "12:04:20", InOrder, "12:04:20"},
		{"12:04:10", "12:04:10", InOrder, "12:04:10"},
		{"12:04:10", "12:03:50", OutOfOrder, "12:04:10"},
		{"12:05:29", "12:04:59", OutOfOrder, "12:05:29"}, // [12:04, 12:05) closes at 12:05:30
		{"12:05:30", "12:04:59", TooLate, "12:05:30"},
		{"12:07:00", "12:05:00", TooLate, "12:07:00"},
	} {
		v, after := w.Judge(at(c.stream), at(c.at))
		if v != c.want || !after.Equal(at(c.after)) {
			t.Errorf("stream %s, order at %s: %v, stream time %s; want %v, %s", c.stream, c.at, v, after.Format("15:04:05"), c.want, c.after)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	k := Key{Shop: "shop-07", Start: time.Date(2026, 12, 2, 12, 4, 0, 0, time.UTC)}
	got, err := ParseKey(k.Bytes())
	if err != nil || got != k {
		t.Fatalf("ParseKey(%q) = %v, %v; want %v", k.Bytes(), got, err, k)
	}
	if _, err := ParseKey([]byte("nope")); err == nil {
		t.Fatal("ParseKey accepted a key with no window")
	}
}

func TestDiff(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	a, b := Key{"shop-01", t0}, Key{"shop-02", t0}
	want := Totals{a: {2, 500}, b: {1, 300}}
	if d, x := Diff(want, Totals{a: {2, 500}, b: {1, 300}}); len(d) != 0 || x != 0 {
		t.Fatalf("equal totals differ: %v %d", d, x)
	}
	d, x := Diff(want, Totals{a: {3, 750}, b: {1, 300}})
	if len(d) != 1 || d[0] != a || x != 250 {
		t.Fatalf("a double count: %v, %d extra; want [%v], 250", d, x, a)
	}
}
