package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// A CSV as compare writes it becomes a PNG.
func TestDrawWritesAPNG(t *testing.T) {
	dir := t.TempDir()
	csv := "client,version,run,produce_rec_s,consume_rec_s,p50_ms,p99_ms,produce_cpu_s_per_m,consume_cpu_s_per_m\n" +
		"franz-go,v1,1,1000,2000,1,2,0.5,0.4\nfranz-go,v1,2,1100,2100,1,2,0.5,0.4\nsarama,v2,1,500,900,1,3,0.9,0.8\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "compare.csv"), []byte(csv), 0o644))
	require.NoError(t, draw(dir))
	f, err := os.Open(filepath.Join(dir, "compare.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), 100)
}

// A short row or a rate that is not a number is one line naming the file,
// the line and the column, exit status 1: not a panic, not a bar of 0.
func TestBadCSVIsOneLine(t *testing.T) {
	const header = "client,version,run,produce_rec_s,consume_rec_s,p50_ms,p99_ms,produce_cpu_s_per_m,consume_cpu_s_per_m\n"
	bin := brewtest.BuildCmd(t)
	for _, c := range []struct{ csv, want string }{
		{header + "franz-go,v1,1,1000,2000,1,2,0.5,0.4\nsarama,v2,1\n", "compare.csv:3: column 4 (produce_rec_s) is missing"},
		{"client,version,run\nfranz-go,v1,1\n", "compare.csv:2: column 4 (?) is missing"},
		{header + "franz-go,v1,1,fast,2000,1,2,0.5,0.4\n", `compare.csv:2: column 4 (produce_rec_s): "fast" is not a number`},
		{header + "franz-go,v1,1,1000,NaN,1,2,0.5,0.4\n", `compare.csv:2: column 5 (consume_rec_s): "NaN" is not a number`},
		{header, "compare.csv has no runs"},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "compare.csv"), []byte(c.csv), 0o644))
		_, stderr, code := brewtest.RunCmd(t, bin, "", "-dir", dir)
		want := "chart: " + filepath.Join(dir, c.want)
		if code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, want 1 and one line starting %q; stderr:\n%s", c.csv, code, want, stderr)
		}
	}
}

// -h is a usage text like the other programs', not Go's "Usage of /path".
func TestUsage(t *testing.T) {
	for _, c := range []struct{ dir, want string }{{".", "usage: chart "}, {"../defaults", "usage: defaults "}} {
		_, stderr, code := brewtest.RunCmd(t, brewtest.BuildCmdAt(t, c.dir), "", "-h")
		if code != 0 || !strings.HasPrefix(stderr, c.want) || !strings.Contains(stderr, "  -") {
			t.Errorf("%s -h: exit %d, want 0 and %q with the flags; stderr:\n%s", c.dir, code, c.want, stderr)
		}
	}
}
