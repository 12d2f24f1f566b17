package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
