package backpressure

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// ChildArgs are the flags of one courier process (Child) for c and the
// partner at addr.
func ChildArgs(c Courier, addr string) []string {
	args := []string{"-topic", c.Topic, "-group", c.Group, "-partner", addr,
		"-workers", fmt.Sprint(c.Workers), "-queue", fmt.Sprint(c.Queue), "-low", fmt.Sprint(c.Low),
		"-commit-every", c.CommitEvery.String(), "-drain", c.Drain.String(),
		"-session-timeout", c.SessionTimeout.String(), "-sample-every", c.SampleEvery.String()}
	if c.Reads {
		args = append(args, "-reads")
	}
	return args
}

// Child is one courier process, the subcommand `courier` of the programs
// that run couriers as processes of their own (the parent measures a
// process's memory, and kills it): it runs a Courier and writes its reports
// to stdout, one JSON line each. SIGTERM or Ctrl-C stops it gracefully
// (Courier.Run), and it exits 0; a failure is one line on stderr, exit 1.
func Child(program string, args []string) {
	fs := flag.NewFlagSet(program+" courier", flag.ExitOnError)
	var c Courier
	var addr string
	fs.StringVar(&c.Topic, "topic", "", "the orders topic")
	fs.StringVar(&c.Group, "group", "", "the consumer group")
	fs.StringVar(&addr, "partner", partner.DefaultAddr, "the partner API")
	fs.IntVar(&c.Workers, "workers", 16, "workers booking at the partner")
	fs.IntVar(&c.Queue, "queue", 500, "the local queue's bound; 0: unbounded")
	fs.IntVar(&c.Low, "low", 125, "resume fetching once the queue drained to this")
	fs.DurationVar(&c.CommitEvery, "commit-every", 500*time.Millisecond, "how often to commit what is booked")
	fs.DurationVar(&c.Drain, "drain", 10*time.Second, "a graceful stop's bound on booking what the queue holds")
	fs.DurationVar(&c.SessionTimeout, "session-timeout", 0, "the group session timeout (0: kgo's 45s)")
	fs.DurationVar(&c.SampleEvery, "sample-every", 100*time.Millisecond, "how often to report a sample")
	fs.BoolVar(&c.Reads, "reads", false, "report every record read")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	name := program + " courier"
	var fc brewkit.FlagCheck
	fc.Topic("topic", c.Topic)
	fc.Name("group", c.Group)
	fc.Require(c.Workers >= 1 && c.Workers <= 1024, "workers", c.Workers, "must be 1 to 1024")
	fc.Require(c.Queue >= 0, "queue", c.Queue, "must not be negative")
	fc.Require(c.Low >= 0 && (c.Queue == 0 || c.Low < c.Queue), "low", c.Low, "must be 0 to -queue minus 1")
	fc.Require(c.CommitEvery > 0, "commit-every", c.CommitEvery, "must be positive")
	fc.Require(c.Drain >= 0, "drain", c.Drain, "must not be negative")
	fc.Require(c.SessionTimeout >= 0, "session-timeout", c.SessionTimeout, "must not be negative")
	fc.ExitOnUsageError(name)
	c.Partner = partner.NewClient(addr)
	c.Partner.HTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.Workers}}
	enc := json.NewEncoder(os.Stdout)
	c.Report = func(r Report) { enc.Encode(r) } //nolint:errcheck // the parent reads it

	cfg, err := brewkit.FromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Kafka first: a cluster that is not there, or wants a login or TLS,
	// is one line within brewkit.DialTimeout, where the consumer alone
	// would dial again and again.
	cl, _, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	cl.Close()
	if err := c.Run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
