package steps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	l, err := Read(write(t, `# a comment
topics: brew.a.v1 brew.b.*
groups: brew.g
files: .state tmp/x

== First
make run
Look at this.
And that.

== Second
make watch N=2 KEYS="a b"
stop: 5s
needs: real Kafka
Live.
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) != 2 || l.Steps[0].Target != "run" || l.Steps[0].Text != "Look at this.\nAnd that." {
		t.Fatalf("%+v", l.Steps)
	}
	s := l.Steps[1]
	if s.Target != "watch" || s.Stop != 5*time.Second || !s.Real || l.Steps[0].Real || s.Command != `make watch N=2 KEYS="a b"` || strings.Join(s.Vars, "|") != "N=2|KEYS=a b" {
		t.Fatalf("%+v", s)
	}
	if !Matches(l.Topics, "brew.b.123") || !Matches(l.Topics, "brew.a.v1") || Matches(l.Topics, "brew.a.v2") || !Matches(l.Groups, "brew.g") || Matches(l.Groups, "brew.gg") {
		t.Fatal("patterns")
	}
	if strings.Join(l.Files, " ") != ".state tmp/x" {
		t.Fatalf("files: %q", l.Files)
	}
}

func TestReadRefusesBadFiles(t *testing.T) {
	for name, text := range map[string]string{
		"no steps":       "topics: a\n",
		"no command":     "== A\nno make here\n",
		"no text":        "== A\nmake run\n",
		"bad stop":       "== A\nmake run\nstop: soon\ntext\n",
		"text before ==": "hello\n== A\nmake run\ntext\n",
		"bad var":        "== A\nmake run now\ntext\n",
		"files outside":  "files: ../other\n== A\nmake run\ntext\n",
		"files absolute": "files: /tmp\n== A\nmake run\ntext\n",
	} {
		if _, err := Read(write(t, text)); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), File) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
}
