package brewkit

import (
	"flag"
	"fmt"
	"os"
)

// FlagCheck collects what is wrong with a program's flags and arguments, so
// that a bad value is answered with the flag and the value, not only with the
// usage text:
//
//	var fc brewkit.FlagCheck
//	fc.Require(*interval > 0, "interval", *interval, "must be > 0")
//	fc.NoArgs()
//	fc.ExitOnUsageError("quorum-status")
type FlagCheck struct {
	problems []string
}

// Require notes a problem with -flag value unless ok.
func (c *FlagCheck) Require(ok bool, flag string, value any, why string) {
	if !ok {
		c.problems = append(c.problems, fmt.Sprintf("-%s %v: %s", flag, value, why))
	}
}

// Problem notes a problem that no single flag owns.
func (c *FlagCheck) Problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// NoArgs notes arguments left after the flags, for programs that take none.
func (c *FlagCheck) NoArgs() {
	if flag.NArg() > 0 {
		c.problems = append(c.problems, fmt.Sprintf("unexpected argument %q: this program takes only flags", flag.Arg(0)))
	}
}

// ExitOnUsageError returns when no problem was noted. Otherwise it prints
// each problem as "program: problem" on stderr and exits with status 2, the
// status of a usage error.
func (c *FlagCheck) ExitOnUsageError(program string) {
	if len(c.problems) == 0 {
		return
	}
	for _, p := range c.problems {
		fmt.Fprintf(os.Stderr, "%s: %s\n", program, p)
	}
	fmt.Fprintf(os.Stderr, "run `%s -h` for every flag\n", program)
	os.Exit(2)
}
