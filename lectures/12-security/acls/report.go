package acls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// This file is the harness that keeps the score of a run: each check run
// within its bound, what Kafka answered set beside what least privilege
// means, and the table the README shows. The checks and their Kafka calls
// are in acl.go.

// Row is one action one user took, and what the cluster answered.
type Row struct {
	Who, Action, Resource string
	Want                  string // OK, or the error name least privilege makes Kafka answer
	Got                   string // OK, or the error name Kafka answered
	Err                   error  // the error itself (nil for OK)
}

// Report is a run.
type Report struct {
	Users        []string // the users, in the order of the table
	UsersCreated []string // created by this run
	UsersReset   []string // existed with another password: the lecture's set again
	Mechanism    string   // the users' SASL mechanism
	TLS          bool     // whether they logged in over TLS
	ACLs         int      // ACLs of Plan in place
	ACLsCreated  int      // of them, created by this run
	Rows         []Row
}

// Mismatches are the rows whose answer is not what least privilege means.
func (r Report) Mismatches() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Got != row.Want {
			out = append(out, row)
		}
	}
	return out
}

// ErrorName is how a row shows err: OK for none, else Kafka's error name
// (TOPIC_AUTHORIZATION_FAILED), else the error's text.
func ErrorName(err error) string {
	if err == nil {
		return "OK"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func name(err error) string {
	if err == nil {
		return "OK"
	}
	return ErrorName(err)
}

// check runs do as who, within the bound of one check, and records what
// Kafka answered against want, least privilege's answer (nil: OK). A check
// that ctx's end cut short records nothing.
func (ch *checks) check(ctx context.Context, who, action, resource string, want error, do func(ctx context.Context) error) {
	cctx, cancel := context.WithTimeout(ctx, ch.timeout)
	defer cancel()
	err := do(cctx)
	if ctx.Err() != nil {
		return
	}
	ch.rep.Rows = append(ch.rep.Rows, Row{Who: who, Action: action, Resource: resource, Want: name(want), Got: name(err), Err: err})
}

// topicRes and groupRes are a row's resource.
func topicRes(name string) string { return "topic " + name }
func groupRes(name string) string { return "group " + name }

// PrintReport writes the report as the README shows it.
func PrintReport(w io.Writer, rep Report) {
	users := make([]string, len(rep.Users))
	for i, u := range rep.Users {
		users[i] = secure.Principal(u)
	}
	fmt.Fprintf(w, "operator (super user, plaintext listeners): users %s in place (created %d)\n", strings.Join(users, ", "), len(rep.UsersCreated))
	for _, u := range rep.UsersReset {
		fmt.Fprintf(w, "operator: %s refused the lecture's password (changed by another program?): set it again\n", secure.Principal(u))
	}
	fmt.Fprintf(w, "operator: %d ACLs of least privilege in place (created %d), on every node\n", rep.ACLs, rep.ACLsCreated)
	over := "SASL_PLAINTEXT"
	if rep.TLS {
		over = "SASL_SSL"
	}
	fmt.Fprintf(w, "each user logs in with %s over %s and tries:\n\n", rep.Mechanism, over)
	t := brewkit.NewTable(w, "WHO", "ACTION", "RESOURCE", "RESULT")
	for _, r := range rep.Rows {
		got := r.Got
		if got != r.Want {
			got += " (least privilege: " + r.Want + ")"
		}
		t.Row(r.Who, r.Action, r.Resource, got)
	}
	t.Flush()
}
