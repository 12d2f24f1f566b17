package brewkit

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// FlagCheck collects what is wrong with a program's flags and arguments, so
// that a bad value is answered with the flag and the value, not only with the
// usage text:
//
//	var fc brewkit.FlagCheck
//	fc.Require(*interval > 0, "interval", *interval, "must be > 0")
//	fc.Topic("topic", *topic)
//	fc.NoArgs()
//	fc.ExitOnUsageError("quorum-status")
type FlagCheck struct {
	problems []string
}

// Require notes a problem with -flag value unless ok.
func (c *FlagCheck) Require(ok bool, flag string, value any, why string) {
	if !ok {
		c.problems = append(c.problems, fmt.Sprintf("-%s %s: %s", flag, FlagValue(value), why))
	}
}

// FlagValue is value as a usage error shows it: an empty string as "", so
// that `-topic "": must not be empty` reads as the flag given empty.
func FlagValue(value any) string {
	if s, ok := value.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(value)
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

// Topic notes a problem with -flag name unless name is a topic name Kafka
// accepts (see topicNameError), so that a bad name is a usage error, not a
// broker's refusal later.
func (c *FlagCheck) Topic(flag, name string) {
	if err := topicNameError(name); err != nil {
		c.Require(false, flag, name, err.Error())
	}
}

// Topics checks -flag list, comma-separated topic names, as Topic checks
// one, and returns the names.
func (c *FlagCheck) Topics(flag, list string) []string {
	names := strings.Split(list, ",")
	for _, n := range names {
		if err := topicNameError(n); err != nil {
			c.Require(false, flag, list, "want comma-separated topic names (a,b): "+err.Error())
			break
		}
	}
	return names
}

// Name notes a problem with -flag value when it is empty: a group, a
// transactional id or another name Kafka takes as any non-empty string.
func (c *FlagCheck) Name(flag, value string) {
	c.Require(value != "", flag, value, "must not be empty")
}

// topicNameError says what is wrong with name as a Kafka topic name, or
// returns nil: Kafka takes 1 to 249 characters of ASCII letters, digits, '.',
// '_' and '-', other than "." and "..".
func topicNameError(name string) error {
	const rule = "a topic name is 1 to 249 characters of letters, digits, '.', '_' and '-', and not \".\" or \"..\""
	switch {
	case name == "":
		return errors.New("must not be empty: " + rule)
	case name == "." || name == "..", len(name) > 249:
		return errors.New(rule)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%q is not allowed: %s", r, rule)
		}
	}
	return nil
}

// Given reports whether the flag name was set on the command line, for a
// flag whose empty default means something ("" for all topics) while an
// empty value given (-topic=) is a mistake.
func Given(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
