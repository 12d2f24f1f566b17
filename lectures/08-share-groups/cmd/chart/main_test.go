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

const header = "mode,consumers,busy,tickets,elapsed_ms,tickets_per_s\n"

// A CSV as baristas -table -out writes it becomes a PNG of a sane size.
func TestDrawWritesAPNG(t *testing.T) {
	dir := t.TempDir()
	csv := header + "share,1,1,120,3080,39.0\nshare,3,3,120,1330,90.2\nshare,6,6,120,640,189.4\n" +
		"group,1,1,120,2740,44.0\ngroup,3,1,120,2890,42.1\ngroup,6,1,120,3200,37.5\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "throughput.csv"), []byte(csv), 0o644))
	require.NoError(t, draw(dir))
	f, err := os.Open(filepath.Join(dir, "throughput.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	require.Greater(t, img.Bounds().Dx(), 300)
	require.Greater(t, img.Bounds().Dy(), 200)
}

// A bad row is one line naming the file, the line and the column, exit
// status 1: not a panic, not a bar of 0.
func TestBadCSVIsOneLine(t *testing.T) {
	bin := brewtest.BuildCmd(t)
	for _, c := range []struct{ csv, want string }{
		{header + "share,1,1,120,3080,39.0\ngroup,1,1\n", "throughput.csv:3: column 4 (tickets) is missing"},
		{header + "fifo,1,1,120,3080,39.0\n", `throughput.csv:2: column 1 (mode): "fifo" is neither share nor group`},
		{header + "share,many,1,120,3080,39.0\n", `throughput.csv:2: column 2 (consumers): "many" is not a number of consumers`},
		{header + "share,1,1,120,3080,NaN\n", `throughput.csv:2: column 6 (tickets_per_s): "NaN" is not a number of tickets/s`},
		{header, "throughput.csv has no runs"},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "throughput.csv"), []byte(c.csv), 0o644))
		_, stderr, code := brewtest.RunCmd(t, bin, "", "-dir", dir)
		want := "chart: " + filepath.Join(dir, c.want)
		if code != 1 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, want 1 and one line starting %q; stderr:\n%s", c.csv, code, want, stderr)
		}
	}
}
