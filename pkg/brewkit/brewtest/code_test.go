package brewtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const lessonSrc = `package lesson

// Run pauses a partition at the high mark.
func Run() {
	for {
		fetches := cl.PollFetches(ctx)
		if queued > high {
			cl.PauseFetchPartitions(full)
		}
		work(fetches)
		if queued < low {
			cl.ResumeFetchPartitions(full)
		}
	}
}

type Courier struct{}

func (c *Courier) Run() {}

var Defaults = 1
`

func TestExcerptOf(t *testing.T) {
	for _, c := range []struct {
		block string
		ok    bool
	}{
		{"if queued > high {\n\tcl.PauseFetchPartitions(full)\n}\n", true},
		{"fetches := cl.PollFetches(ctx)\n// ...\ncl.ResumeFetchPartitions(full)\n", true},
		{"cl.PauseFetchPartitions(full)\ncl.ResumeFetchPartitions(full)\n", false},         // not consecutive
		{"cl.ResumeFetchPartitions(full)\n// ...\ncl.PauseFetchPartitions(full)\n", false}, // out of order
		{"cl.PauseFetchPartitions(all)\n", false},                                          // drifted
	} {
		err := excerptOf(c.block, lessonSrc)
		if (err == nil) != c.ok {
			t.Errorf("excerptOf(%q) = %v, want ok %v", c.block, err, c.ok)
		}
	}
}

func TestParseCode(t *testing.T) {
	readme := strings.Join([]string{
		"# Lecture",
		"<!-- read-the-code -->",
		"## Read the code",
		"1. [`lesson.go`](lesson.go) `Run`,",
		"   `Courier.Run`: the loop; `Other` is prose",
		"   it pauses and resumes.",
		"2. [`other.go`](other.go): the rest",
		"<!-- /read-the-code -->",
		"<!-- code: lesson.go -->",
		"```go",
		"cl.PauseFetchPartitions(full)",
		"```",
		"<!-- sketch: a test in the student's repository -->",
		"```go",
		"func TestX(t *testing.T) {}",
		"```",
	}, "\n")
	blocks, items, err := parseCode(readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].File != "lesson.go" || blocks[0].Text != "cl.PauseFetchPartitions(full)\n" || blocks[1].File != "" {
		t.Errorf("blocks: %+v", blocks)
	}
	if len(items) != 2 || items[0].File != "lesson.go" || strings.Join(items[0].Names, " ") != "Run Courier.Run" || len(items[1].Names) != 0 {
		t.Errorf("items: %+v", items)
	}
	for _, bad := range []string{
		"```go\nx()\n```",                                              // no marker
		"<!-- code: a.go -->\n\n```go\nx()\n```",                       // not directly above
		"<!-- code: -->\n```go\nx()\n```",                              // no file
		"<!-- read-the-code -->\n- lesson.go\n<!-- /read-the-code -->", // not a numbered link
		"<!-- read-the-code -->\n1. [`a.go`](b.go)\n<!-- /read-the-code -->",
		"<!-- read-the-code -->\n1. [`a.go`](a.go)\n",
	} {
		if _, _, err := parseCode(bad); err == nil {
			t.Errorf("parseCode accepted %q", bad)
		}
	}
}

func TestCheckCodeNamesDeclarations(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lesson.go"), []byte(lessonSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(list string) {
		readme := "<!-- read-the-code -->\n" + list + "\n<!-- /read-the-code -->\n<!-- code: lesson.go -->\n```go\nwork(fetches)\n```\n"
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1. [`lesson.go`](lesson.go) `Run`, `Courier.Run`, `Courier`, `Defaults`: all declared")
	if ft := (&fakeT{}); func() bool { checkCode(ft, dir, "README.md"); return ft.failed }() {
		t.Errorf("declared names failed: %v", ft.msgs)
	}
	write("1. [`lesson.go`](lesson.go) `Stop`: not declared")
	ft := &fakeT{}
	checkCode(ft, dir, "README.md")
	if !ft.failed {
		t.Error("a name the file does not declare passed")
	}
}

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
	msgs   []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, a ...any) {
	f.failed = true
	f.msgs = append(f.msgs, fmt.Sprintf(format, a...))
}
func (f *fakeT) Fatalf(format string, a ...any) {
	f.failed = true
	f.msgs = append(f.msgs, fmt.Sprintf(format, a...))
}
func (f *fakeT) Fatal(a ...any) { f.failed = true }
