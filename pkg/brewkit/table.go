package brewkit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table prints aligned columns separated by two spaces, the way the course's
// expected outputs look:
//
//	NODE  HOST       PORT
//	1     127.0.0.1  19092
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table on w with the given header.
func NewTable(w io.Writer, header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.Row(toAny(header)...)
	}
	return t
}

// Row adds a row; each cell is formatted with %v.
func (t *Table) Row(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(t.tw, strings.Join(s, "\t"))
}

// Flush writes the aligned table out.
func (t *Table) Flush() error { return t.tw.Flush() }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
