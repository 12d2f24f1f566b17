// Command acls (`make acls`) gives the courier partner and the analytics
// contractor least privilege, as the operator, and then tries, as each of
// them, what they may and what they may not do: each answer is Kafka's own.
// `acls describe` (`make acls-describe`) lists the cluster's ACLs as
// kafka-acls --list does; `acls -delete` removes the lecture's ACLs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brew-course/kafka/lectures/12-security/acls"
	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func main() {
	describe := len(os.Args) > 1 && os.Args[1] == "describe"
	if describe {
		os.Args = append(os.Args[:1], os.Args[2:]...)
	}
	o := acls.Defaults
	var del bool
	var principal string
	if describe {
		flag.StringVar(&principal, "principal", "", "list only this principal's ACLs (User:NAME); all when empty")
		flag.Usage = usage("acls describe [-principal User:NAME]", "lists every ACL of the cluster, grouped by resource, as kafka-acls --list prints them")
	} else {
		flag.BoolVar(&del, "delete", false, "delete the lecture's ACLs (the users stay) and stop")
		flag.DurationVar(&o.Timeout, "timeout", o.Timeout, "the bound on each check")
		flag.Usage = usage("acls [-delete] [-timeout 15s] | acls describe [-principal User:NAME]",
			"gives User:partner and User:analytics least privilege, then tries every grant and every denial as each user")
	}
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(o.Timeout >= time.Second && o.Timeout <= 2*time.Minute, "timeout", o.Timeout, "must be 1s to 2m")
	fc.Require(principal == "" || strings.HasPrefix(principal, "User:") && len(principal) > len("User:"), "principal", principal, "must be User:NAME")
	fc.NoArgs()
	fc.ExitOnUsageError("acls")

	brewkit.Main("acls", func(ctx context.Context, cfg brewkit.Config) error {
		switch {
		case describe:
			return list(ctx, cfg, principal)
		case del:
			return remove(ctx, cfg)
		}
		c, err := secure.Find(ctx, cfg)
		if err != nil {
			return err
		}
		rep, err := acls.Run(ctx, c, acls.Lecture, o)
		if err != nil {
			return err
		}
		acls.PrintReport(os.Stdout, rep)
		if bad := rep.Mismatches(); len(bad) > 0 {
			return fmt.Errorf("%d of %d answers are not least privilege's (first: %s %s on %s: %s)", len(bad), len(rep.Rows), bad[0].Who, bad[0].Action, bad[0].Resource, bad[0].Got)
		}
		return nil
	})
}

func usage(synopsis, what string) func() {
	return func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s\n\n%s.\n\n", synopsis, what)
		flag.PrintDefaults()
	}
}

// list prints the cluster's ACLs, as the operator.
func list(ctx context.Context, cfg brewkit.Config, principal string) error {
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	var p *string
	if principal != "" {
		p = &principal
	}
	bs, err := acls.List(ctx, cl, p)
	if err != nil {
		return fmt.Errorf("listing ACLs: %w", err)
	}
	if len(bs) == 0 {
		fmt.Fprintln(os.Stderr, "acls: no ACLs on the cluster (`make acls` creates the lecture's)")
	}
	acls.Print(os.Stdout, acls.Group(bs))
	return nil
}

// remove deletes the lecture's ACLs, as the operator.
func remove(ctx context.Context, cfg brewkit.Config) error {
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer cl.Close()
	n, err := acls.Delete(ctx, cl, acls.Lecture.All()...)
	if err != nil {
		return err
	}
	fmt.Printf("deleted %d ACLs of User:%s, User:%s and User:%s; the users stay\n", n, acls.Lecture.Partner, acls.Lecture.Analytics, acls.Lecture.Writer)
	return nil
}
