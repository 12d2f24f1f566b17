package brewtest

import (
	"fmt"
	"strings"
	"testing"
)

const sample = `intro

<!-- output: status; vary: RaftLeader:, ROLE, LAG 0..100, durations -->
` + "```text" + `
RaftLeader:  3  (after 1.5s)
Brokers:     3

NODE  ROLE            LAG
1     broker + voter  7
2     voter           0
` + "```" + `
`

func sampleBlock(t *testing.T) Block {
	t.Helper()
	bs, err := parseBlocks(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Name != "status" || len(bs[0].Vary) != 4 {
		t.Fatalf("parsed %+v", bs)
	}
	return bs[0]
}

func TestBlockMatchesWhatVaries(t *testing.T) {
	b := sampleBlock(t)
	for _, ok := range []string{
		b.Text,
		"RaftLeader:  1  (after 198ms)\nBrokers:     3\n\nNODE  ROLE                        LAG\n1     broker + active controller  100\n2     voter, not answering        0\n",
	} {
		if err := b.match(ok); err != nil {
			t.Errorf("should match: %v\n%s", err, ok)
		}
	}
	for bad, why := range map[string]string{
		strings.Replace(b.Text, "Brokers:     3", "Brokers:     9", 1): "a literal number",
		strings.Replace(b.Text, "7\n", "101\n", 1):                     "outside 0..100",
		strings.Replace(b.Text, "NODE", "NOD", 1):                      "a header",
		strings.Replace(b.Text, "\n2     voter", "\n3     voter", 1):   "a row's literal field",
		b.Text + "3     voter           0\n":                           "one more line",
		strings.Replace(b.Text, "(after 1.5s)", "(before 1.5s)", 1):    "a word",
	} {
		if err := b.match(bad); err == nil {
			t.Errorf("should not match (%s):\n%s", why, bad)
		}
	}
}

func TestMutationsChangeOnlyLiteralNumbers(t *testing.T) {
	b := sampleBlock(t)
	ms := b.mutations()
	// Literal: "Brokers: 3" only. The RaftLeader line has a duration; the
	// table's paragraph names varying columns, so its rows are left out.
	if len(ms) != 1 || !strings.Contains(ms[0], "Brokers:     4") {
		t.Fatalf("mutations: %q", ms)
	}
	for _, m := range ms {
		if b.match(m) == nil {
			t.Errorf("a changed literal number still matches:\n%s", m)
		}
	}
}

func TestMarkerRules(t *testing.T) {
	for readme, want := range map[string]string{
		"<!-- output: a -->\nsome prose\n```text\nx\n```\n": "directly above",
		"```text\nx\n```\n": "without a marker",
		"<!-- output: a; vary: X; what -->\n```text\nx\n```\n":                       "unknown clause",
		"<!-- output: a -->\n```text\nx\n```\n<!-- output: a -->\n```text\ny\n```\n": "a second block",
		"<!-- not-output: -->\n```text\nx\n```\n":                                    "needs a reason",
		"<!-- output: a -->": "has no text block",
	} {
		_, err := parseBlocks(readme)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error with %q", readme, err, want)
		}
	}
	bs, err := parseBlocks("<!-- not-output: a diagram -->\n```text\n[1]->[2]\n```\n\n1. item\n   <!-- output: b -->\n   ```text\n   x 1\n   ```\n")
	if err != nil || len(bs) != 1 || bs[0].Text != "x 1\n" {
		t.Fatalf("got %+v, %v", bs, err)
	}
	b := Block{Name: "v", Text: "a 1\n", Vary: []string{"nowhere"}}
	if err := b.match("a 1\n"); err == nil || !strings.Contains(err.Error(), "matches no column and no label") {
		t.Errorf("an unused vary item: %v", err)
	}
}

func TestExcerpt(t *testing.T) {
	b := Block{Name: "e", Text: "CLOCK p1 leader 2 -> 1\nCLOCK p2 leader 2 -> 3\n", Vary: []string{"clock"}, Excerpt: true}
	b.Text = "04:49:12.583 p1 leader 2 -> 1\n04:49:12.583 p2 leader 2 -> 3\n"
	if err := b.match("10:00:00.000 p0 isr [1 2 3] -> [1 3]\n10:00:00.001 p1 leader 2 -> 1\nx\n10:00:00.002 p2 leader 2 -> 3\n"); err != nil {
		t.Error(err)
	}
	if err := b.match("10:00:00.002 p2 leader 2 -> 3\n10:00:00.001 p1 leader 2 -> 1\n"); err == nil {
		t.Error("an excerpt keeps its order")
	}
}

func TestDurations(t *testing.T) {
	got := blankDurations("elected after 198ms, full after 1m2.5s, slowest 1.234s (0 waited over 1s)")
	want := "elected after DURATION, full after DURATION, slowest DURATION (0 waited over DURATION)"
	if got != want {
		t.Fatalf("got %q", got)
	}
}

func TestListsAfterALabel(t *testing.T) {
	b := Block{Name: "l", Text: "ISR shrank [1 2 3] -> [1 2] after x\n", Vary: []string{"->"}}
	if err := b.match("ISR shrank [1 2 3] -> [2 3] after x\n"); err != nil {
		t.Error(err)
	}
	if err := b.match("ISR shrank [1 3] -> [1 2] after x\n"); err == nil {
		t.Error("a list before the label is literal")
	}
}

func TestColumnForOneRow(t *testing.T) {
	b := Block{Name: "r", Text: "MODE  STORED  DUPLICATED\noff   103     3\non    100     0\n", Vary: []string{"STORED@off", "DUPLICATED@off 1..1000"}}
	if err := b.match("MODE  STORED  DUPLICATED\noff   120     20\non    100     0\n"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{
		"MODE  STORED  DUPLICATED\noff   100     0\non    100     0\n",
		"MODE  STORED  DUPLICATED\noff   103     3\non    101     1\n",
	} {
		if b.match(bad) == nil {
			t.Errorf("should not match:\n%s", bad)
		}
	}
}

// A row's own range is narrower than the column's, and wins; a row is named
// as the README writes it, even when "names" blanks its name.
func TestRowRangeWinsOverTheColumns(t *testing.T) {
	b := Block{Name: "r", Text: "TOPIC          READ  RETRIED\nbrew.orders.v1  60    26\nbrew.retry.5s   26    0\n",
		Vary: []string{"names", "RETRIED 0..60", "RETRIED@brew.orders.v1 1..60", "READ@brew.retry.5s 1..60"}}
	if err := b.match("TOPIC          READ  RETRIED\nbrew.orders.v1  60    1\nbrew.retry.5s   1     60\n"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{
		"TOPIC          READ  RETRIED\nbrew.orders.v1  60    0\nbrew.retry.5s   26    0\n",   // the row's range
		"TOPIC          READ  RETRIED\nbrew.orders.v1  60    26\nbrew.retry.5s   0     0\n",  // the row's range
		"TOPIC          READ  RETRIED\nbrew.orders.v1  59    26\nbrew.retry.5s   26    0\n",  // READ of the other row is literal
		"TOPIC          READ  RETRIED\nbrew.orders.v1  60    26\nbrew.retry.5s   26    61\n", // the column's range
	} {
		if b.match(bad) == nil {
			t.Errorf("should not match:\n%s", bad)
		}
	}
}

// A name blanked to NAME must not shift the columns after it.
func TestColumnsStayWhereTheBlockHasThem(t *testing.T) {
	b := Block{Name: "c", Text: "TOPIC                 PART  MEMBER\nbrew.test.topic-12345  0     m-abc\n", Vary: []string{"names", "MEMBER"}}
	if err := b.match("TOPIC                PART  MEMBER\nbrew.test.topic-9876  0     m-xyz-longer\n"); err != nil {
		t.Error(err)
	}
	if b.match("TOPIC                PART  MEMBER\nbrew.test.topic-9876  1     m-xyz\n") == nil {
		t.Error("PART is literal")
	}
}

// nameRecorder is a test whose name is set and whose Fatalf is recorded.
type nameRecorder struct {
	testing.TB
	name, fatal string
}

func (r *nameRecorder) Name() string                      { return r.name }
func (r *nameRecorder) Helper()                           {}
func (r *nameRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// A test selected by a word in its name must carry it: scripts/test would
// otherwise run it in the wrong phase or not at all.
func TestRequireNameNamesTheMissingWord(t *testing.T) {
	r := &nameRecorder{name: "TestDrillLosesNothing/acks=all"}
	RequireName(r, Alone, "stops nodes")
	if !strings.Contains(r.fatal, `must contain "Alone"`) {
		t.Fatalf("a fault test without Alone in its name passed: %q", r.fatal)
	}
	r = &nameRecorder{name: "TestDrillLosesNothingAlone/acks=all"}
	RequireName(r, Alone, "stops nodes")
	if r.fatal != "" {
		t.Fatalf("a well-named test failed: %s", r.fatal)
	}
}
