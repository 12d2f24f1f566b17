package users

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/brew-course/kafka/pkg/brewkit"
)

// Print writes r as the README shows it.
func Print(w io.Writer, o Options, r Result) {
	fmt.Fprintf(w, "the operator (a super user on the plaintext listeners) upserts %s and %s with AlterUserSCRAMs:\n", o.Partner, o.Analytics)
	fmt.Fprintf(w, "SCRAM-SHA-512, %d iterations; a user that exists gets its password set again, so every run starts the same\n", o.Iterations)
	fmt.Fprintf(w, "every node takes both logins after %s\n\n", round(r.Settled))

	fmt.Fprintln(w, "DescribeUserSCRAMs: every SCRAM user of the cluster")
	t := brewkit.NewTable(w, "USER", "MECHANISM", "ITERATIONS")
	for _, u := range r.Users {
		t.Row(u.Name, u.Mechanism, u.Iterations)
	}
	t.Flush()

	v := r.Partner
	acls := fmt.Sprintf("no ACL names User:%s yet", o.Partner)
	if v.ACLs > 0 {
		acls = fmt.Sprintf("%d ACLs name User:%s (`make acls` made them; `make reset-lecture L=12` drops them)", v.ACLs, o.Partner)
	}
	fmt.Fprintf(w, "\n%s logs in on %s %s with its password: ok; %s:\n", o.Partner, r.Protocol, strings.Join(r.SASL, ","), acls)
	fmt.Fprintf(w, "  metadata: brokers %v, topics %d (the operator sees %d)\n", v.Brokers, v.Topics, v.All)
	fmt.Fprintf(w, "  reading %s: %s\n", o.Topic, kafkaOutcome(v.ReadErr))

	attempt(w, "a wrong password", r.Wrong)
	attempt(w, "TLS without SASL (no KAFKA_SASL_MECHANISM)", r.NoSASL)
	if r.NoTLS != nil {
		attempt(w, "SASL without TLS (no KAFKA_TLS)", *r.NoTLS)
	}

	rot := r.Rotation
	fmt.Fprintf(w, "\nrotation: AlterUserSCRAMs upserts %s with a new password; every node takes it after %s\n", o.Partner, round(rot.Settled))
	fmt.Fprintf(w, "  a new connection, the old password:  %s\n", refused(rot.OldLogin))
	fmt.Fprintf(w, "  a new connection, the new password:  %s\n", refused(rot.NewLogin))
	stale := outcome(rot.Stale)
	if rot.Stale == nil {
		stale = fmt.Sprintf("ok, %d new logins", rot.StaleDials)
		if rot.StaleDials == 0 {
			stale = "ok, on the same connection: no new login"
		}
	}
	fmt.Fprintf(w, "  the connection to node %d opened before the rotation:  %s (connections.max.reauth.ms=%s)\n", rot.StaleNode, stale, rot.ReauthMs)
	fmt.Fprintf(w, "  the same client's first connection to node %d:  %s\n", rot.OtherNode, refused(rot.Other))
}

// attempt writes what franz-go and brewkit.Ping say of one bad login.
func attempt(w io.Writer, what string, a Attempt) {
	fmt.Fprintf(w, "\n%s:\n", what)
	fmt.Fprintf(w, "  franz-go Ping:  %s (after %s)\n", outcome(a.Raw), round(a.RawAfter))
	fmt.Fprintf(w, "  brewkit.Ping:   %s\n", outcome(a.Diagnosis))
}

// PrintDeleted writes what -delete did.
func PrintDeleted(w io.Writer, ds []Deleted) {
	fmt.Fprintln(w, "the operator deletes the lecture's SCRAM-SHA-512 users with AlterUserSCRAMs:")
	t := brewkit.NewTable(w, "USER", "CREDENTIAL")
	for _, d := range ds {
		state := "deleted"
		if !d.Existed {
			state = "none (deleted before)"
		}
		t.Row(d.User, state)
	}
	t.Flush()
}

// kafkaOutcome is outcome with Kafka's error alone, when there is one: what
// a wrapping adds (the topic, partition -1) the line says already.
func kafkaOutcome(err error) string {
	if ke := (*kerr.Error)(nil); errors.As(err, &ke) {
		return ke.Error()
	}
	return outcome(err)
}

// refused is "ok", or "refused: " and the broker's answer to a login,
// without brewkit.Ping's advice, which the lines above show.
func refused(err error) string {
	if err == nil {
		return "ok"
	}
	if login := (*brewkit.LoginError)(nil); errors.As(err, &login) && login.Err != nil {
		err = login.Err
	}
	return "refused: " + outcome(err)
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
