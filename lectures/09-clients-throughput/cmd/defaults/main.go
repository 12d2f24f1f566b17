// Command defaults prints what each Go client does when you set nothing,
// read from the libraries' own default configuration.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/09-clients-throughput/defaults"
)

func main() {
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: defaults [-json]\n\nPrints what each Go client does when you set nothing, from its own default configuration.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.NoArgs()
	fc.ExitOnUsageError("defaults")
	rows, err := defaults.Read()
	if err != nil {
		fmt.Fprintln(os.Stderr, "defaults:", err)
		os.Exit(1)
	}
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(rows) //nolint:errcheck // stdout
		return
	}
	defaults.Print(os.Stdout, rows)
}
