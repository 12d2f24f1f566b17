package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/13-observability/rules"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

func needPromtool(t *testing.T) {
	t.Helper()
	if _, err := rules.Promtool(); err != nil {
		if brewtest.RequireRealSet() {
			t.Fatalf("%v [BREW_REQUIRE_REAL=1]", err)
		}
		t.Skipf("needs promtool: %v; `make test-real` installs it and runs this test", err)
	}
}

// `make rules` prints the rule table, a line per alert tested, and the
// totals promtool passed, which are the files' own counts; exit 0; all of
// it as the README shows.
func TestRulesCommandPrintsEachAlertAndPromtoolsVerdictReadme(t *testing.T) {
	needPromtool(t)
	out, stderr, code := inLecture(t, brewtest.BuildCmd(t))
	require.Zero(t, code, stderr)
	t.Log("\n" + out)
	rf, err := rules.LoadRules("../../rules/" + rules.RulesFile)
	require.NoError(t, err)
	tf, err := rules.LoadTests("../../rules/" + rules.TestsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "rules/brew-alerts.yml: 8 alerts, group brew (every 5s)", lines[0])
	require.Regexp(t, `^ALERT +FOR +SEVERITY +EXPR$`, lines[1])
	for i, a := range rf.Alerts {
		require.Regexp(t, `^`+a.Name+` +`+rules.FormatDuration(a.For)+` +`+a.Severity()+` +\S`, lines[2+i])
	}
	require.Contains(t, out, "\npromtool check rules rules/brew-alerts.yml: SUCCESS: 8 rules found\n")
	require.Regexp(t, `(?m)^ALERT +GROUPS +CHECKS +FIRING +RESULT$`, out)
	for _, a := range rf.Alerts {
		require.Regexp(t, `(?m)^`+a.Name+` +\d+ +\d+ +[1-9]\d* +passed$`, out)
	}
	require.Equal(t, "promtool: 8 alerts, "+itoa(tf.Checks())+" checks passed", lines[len(lines)-1])
	brewtest.MatchesReadme(t, "../../README.md", "rules", out)
	brewtest.MatchesReadme(t, "../../README.en.md", "rules", out)
}

// A rule whose for is longer than its tests say: exit 1, the alert FAILED
// with promtool's expected and got, the other alerts passed.
func TestRulesCommandFailsABrokenRule(t *testing.T) {
	needPromtool(t)
	b, err := os.ReadFile("../../rules/" + rules.RulesFile)
	require.NoError(t, err)
	broken := strings.Replace(string(b), "up{job=\"kafka\"} == 0\n        for: 15s", "up{job=\"kafka\"} == 0\n        for: 1m", 1)
	require.NotEqual(t, string(b), broken)
	path := filepath.Join(t.TempDir(), "broken.yml")
	require.NoError(t, os.WriteFile(path, []byte(broken), 0o644))

	out, stderr, code := inLecture(t, brewtest.BuildCmd(t), "-rules", path)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	require.Equal(t, "rules: promtool failed the rules (above)\n", stderr)
	require.Regexp(t, `(?m)^BrewNodeDown +1m +page `, out)
	require.Regexp(t, `(?m)^BrewNodeDown +\d+ +\d+ +\d+ +FAILED$`, out)
	require.Regexp(t, `(?m)^BrewGroupLagTooOld +\d+ +\d+ +\d+ +passed$`, out)
	require.Contains(t, out, "FAILED: BrewNodeDown fires for the node that stops")
	require.Contains(t, out, "alertname: BrewNodeDown, time: 1m20s,")
	require.Contains(t, out, "got:[]")
	require.True(t, strings.HasSuffix(out, "promtool: 1 of 8 alerts FAILED ("+itoa(mustChecks(t))+" checks)\n"), out)
}

func mustChecks(t *testing.T) int {
	tf, err := rules.LoadTests("../../rules/" + rules.TestsFile)
	require.NoError(t, err)
	return tf.Checks()
}

// A file that does not exist, or an argument: exit 2, the flag named.
func TestRulesCommandBadFlags(t *testing.T) {
	here, err := os.Getwd()
	require.NoError(t, err)
	brewtest.BadFlag(t, here, "-rules", "/nonexistent/brew-alerts.yml")
	brewtest.BadFlag(t, here, "-tests", "")
	bin := brewtest.BuildCmd(t)
	_, stderr, code := brewtest.RunCmd(t, bin, "", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `rules: unexpected argument "extra"`)
	_, stderr, code = brewtest.RunCmd(t, bin, "", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "usage: rules [-rules FILE] [-tests FILE]")
}

func itoa(n int) string { return strconv.Itoa(n) }

// inLecture runs bin with args in the lecture folder, as `make rules` does.
func inLecture(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../.."
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return o.String(), e.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}
