package brewtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLecture writes files (name -> source) into a lecture folder named
// 99-test and returns its path.
func writeLecture(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "99-test")
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// funcOf is a function of n lines (signature and closing brace included).
func funcOf(name string, n int) string {
	return "func " + name + "() {\n" + strings.Repeat("\t_ = 1\n", n-2) + "}\n"
}

func TestLessonShapeCatchesEachBreach(t *testing.T) {
	const lesson = "package p\n\n" + `func Run(cl interface{ ProduceSync(int) }) { cl.ProduceSync(1) }` + "\n"
	const harness = "package p\n\n// This file is the harness that counts.\n\nfunc count() {}\n"
	cases := []struct {
		name  string
		files map[string]string
		items []ReadItem
		want  string // "" for no failure
	}{
		{name: "clean", files: map[string]string{"p/run.go": lesson, "p/count.go": harness}, items: []ReadItem{{File: "p/run.go"}}},
		{name: "81 lines", files: map[string]string{"p/run.go": "package p\n\n" + funcOf("Long", 81)}, want: "is 81 lines"},
		{name: "80 lines", files: map[string]string{"p/run.go": "package p\n\n" + funcOf("Long", 80)}},
		{name: "harness calls kafka", files: map[string]string{"p/count.go": strings.Replace(lesson, "package p\n", "package p\n\n// This file is the harness around Run.\n", 1)}, want: "says it is the harness, and calls franz-go"},
		{name: "reading list names the harness", files: map[string]string{"p/count.go": harness}, items: []ReadItem{{File: "p/count.go"}}, want: "names p/count.go, which says it is the harness"},
		{name: "test files are not lecture code", files: map[string]string{"p/run_test.go": "package p\n\n" + funcOf("TestLong", 200)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeT{}
			checkLessonShape(ft, writeLecture(t, c.files), c.items)
			got := fmt.Sprint(ft.msgs)
			if c.want == "" && ft.failed {
				t.Fatalf("failed on a lecture of the right shape: %s", got)
			}
			if c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("want a failure saying %q, got %s", c.want, got)
			}
		})
	}
}
