// Command rules (`make rules`) prints the course's alert rules (each
// alert's for, severity and expression) and runs promtool's unit tests of
// them: per alert, the test groups and checks that prove it fires on its
// fault after its for, stays quiet on a healthy cluster and resolves after
// the fix. It needs promtool (`make services-up S=prometheus` installs it),
// not a cluster. Exit 1 when promtool fails a rule or a test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/lectures/13-observability/rules"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), `usage: rules [-rules FILE] [-tests FILE]

Prints each alert of the rule file (name, for, severity, expression), then
has promtool check the file and run the unit tests on it (the tests' own
rule_files is replaced by -rules), with a verdict per alert and a last line
"promtool: N alerts, M checks passed". Needs promtool, not a cluster.
Defaults: the lecture's rules/%s and rules/%s.

`, rules.RulesFile, rules.TestsFile)
		flag.PrintDefaults()
	}
	rulesPath := flag.String("rules", "", "the rule file (default: the lecture's rules/"+rules.RulesFile+")")
	testsPath := flag.String("tests", "", "promtool's unit test file (default: the lecture's rules/"+rules.TestsFile+")")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(!brewkit.Given("rules") || isFile(*rulesPath), "rules", *rulesPath, "want a rule file that exists")
	fc.Require(!brewkit.Given("tests") || isFile(*testsPath), "tests", *testsPath, "want a promtool test file that exists")
	fc.NoArgs()
	fc.ExitOnUsageError("rules")

	brewkit.Main("rules", func(ctx context.Context, _ brewkit.Config) error {
		// The lecture's files stand in for the ones not named; a rule file
		// named is read first, so that its own fault is the one reported.
		var r, t string
		var found error
		if *rulesPath == "" || *testsPath == "" {
			r, t, found = rules.Files()
		}
		if *rulesPath == "" {
			if found != nil {
				return found
			}
			*rulesPath = r
		}
		f, err := rules.LoadRules(*rulesPath)
		if err != nil {
			return err
		}
		if *testsPath == "" {
			if found != nil {
				return found
			}
			*testsPath = t
		}
		rules.PrintRules(os.Stdout, f)
		fmt.Println()
		res, err := rules.Run(ctx, *rulesPath, *testsPath)
		if err != nil {
			return err
		}
		rules.PrintResult(os.Stdout, res)
		if !res.Passed() {
			return errors.New("promtool failed the rules (above)")
		}
		for _, a := range res.Alerts() {
			if !a.Passed || !a.InRules {
				return fmt.Errorf("alert %s: every alert needs a passing test, and every alert tested a rule", a.Name)
			}
		}
		return nil
	})
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}
