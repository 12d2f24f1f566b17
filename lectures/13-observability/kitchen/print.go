package kitchen

import (
	"fmt"
	"io"
	"strconv"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes the run's counts, then each metric with its value and
// meaning.
func Print(w io.Writer, r Report) {
	fmt.Fprintf(w, "\ntill placed: %d, failed: %d; kitchen cooked: %d (group %s)\n\n", r.Placed, r.Failed, r.Cooked, r.Group)
	t := brewkit.NewTable(w, "METRIC", "CLIENT", "VALUE", "WHAT IT SAYS")
	for _, m := range r.Metrics {
		client := m.Client
		if client == "" {
			client = "-"
		}
		t.Row(Namespace+"_"+m.Name, client, strconv.FormatFloat(m.Value, 'f', -1, 64), m.Means)
	}
	t.Flush() //nolint:errcheck // stdout
}
