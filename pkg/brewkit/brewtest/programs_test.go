package brewtest

import (
	"fmt"
	"strings"
	"testing"
)

func TestProgramNamesCatchEachBreach(t *testing.T) {
	const mod = "module example.com/99-test\n"
	main := func(imports ...string) string {
		s := "package main\n\nimport (\n"
		for _, p := range imports {
			s += "\t_ \"example.com/99-test/" + p + "\"\n"
		}
		return s + ")\n\nfunc main() {}\n"
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string // "" for no failure
	}{
		{name: "agrees", files: map[string]string{"go.mod": mod, "cmd/users/main.go": main("users"), "users/u.go": "package users\n"}},
		{name: "hyphens dropped", files: map[string]string{"go.mod": mod, "cmd/retry-topics/main.go": main("retrytopics", "notes"), "retrytopics/r.go": "package retrytopics\n", "notes/n.go": "package notes\n"}},
		{name: "main only", files: map[string]string{"go.mod": mod, "cmd/chart/main.go": main()}},
		{name: "another name", files: map[string]string{"go.mod": mod, "cmd/users/main.go": main("scram"), "scram/s.go": "package scram\n"}, want: "cmd/users runs package scram of its lecture and none named users"},
		{name: "listed", files: map[string]string{"go.mod": mod, "cmd/users/main.go": main("scram"), "scram/s.go": "package scram\n", programNamesFile: "cmd/users # runs scram\n"}},
		{name: "listed and agrees", files: map[string]string{"go.mod": mod, "cmd/users/main.go": main("users"), "users/u.go": "package users\n", programNamesFile: "cmd/users\n"}, want: "whose package now has its name"},
		{name: "listed and gone", files: map[string]string{"go.mod": mod, programNamesFile: "cmd/users\n"}, want: "which is no program of the lecture"},
		{name: "the folder's name is not the package's", files: map[string]string{"go.mod": mod, "cmd/users/main.go": main("users"), "users/u.go": "package scram\n"}, want: "runs package scram"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeT{}
			checkProgramNames(ft, writeLecture(t, c.files))
			got := fmt.Sprint(ft.msgs)
			if c.want == "" && ft.failed {
				t.Fatalf("failed on programs named for their packages: %s", got)
			}
			if c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("want a failure saying %q, got %s", c.want, got)
			}
		})
	}
}
