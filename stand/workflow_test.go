package stand_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The GitHub workflow for forks cannot run here; actionlint (from the Go
// module proxy, pinned) checks it in every tier. A broken copy must fail, so
// the check is known to bite.
const actionlint = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

func runActionlint(t *testing.T, file string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "run", actionlint, "-no-color", file).CombinedOutput()
	return string(out), err
}

func TestWorkflowPassesActionlint(t *testing.T) {
	files, _ := filepath.Glob("../.github/workflows/*.yml")
	if len(files) == 0 {
		t.Fatal("no workflow in .github/workflows")
	}
	for _, f := range files {
		if out, err := runActionlint(t, f); err != nil {
			t.Errorf("actionlint %s: %v\n%s", f, err, out)
		}
	}
	b, err := os.ReadFile("../.github/workflows/ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	// Its commands are the ones .ci/run and the README use.
	for _, cmd := range []string{"run: make test\n", "run: make up STAND=docker", "run: make test-real", "run: make down", "actions/upload-artifact"} {
		if !strings.Contains(wf, cmd) {
			t.Errorf("ci.yml lacks %q", cmd)
		}
	}
	broken := filepath.Join(t.TempDir(), "broken.yml")
	if err := os.WriteFile(broken, []byte(strings.Replace(wf, "runs-on: ubuntu-latest", "runs-on: [", 1)+"\n  bad:\n    steps: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runActionlint(t, broken); err == nil {
		t.Errorf("actionlint passed a broken workflow:\n%s", out)
	}
}

func TestChangedLectures(t *testing.T) {
	out, err := exec.Command("../scripts/changed-lectures", "").Output()
	if err != nil || strings.TrimSpace(string(out)) != "all" {
		t.Fatalf("no base: %q %v", out, err)
	}
}
