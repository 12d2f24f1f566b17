package retrytopics

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brew-course/kafka/lectures/10-processing-failures/courier"
	"github.com/brew-course/kafka/lectures/10-processing-failures/partner"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Report is one JSON line a courier process (Child) writes to stdout.
type Report struct {
	Kind string `json:"kind"`           // "assigned", "progress"
	Line string `json:"line,omitempty"` // progress: what Courier.Say says
}

// ChildArgs are the flags of one courier process (Child) for c, booking at
// the partner at addr with calls bounded by callTimeout.
func ChildArgs(c Courier, addr string, callTimeout time.Duration) []string {
	var stages []string
	for _, s := range c.Topics.Retries {
		stages = append(stages, s.Topic+"="+s.Delay.String())
	}
	args := []string{"-orders", c.Topics.Orders, "-retries", strings.Join(stages, ","), "-dlt", c.Topics.DLT,
		"-group", c.Group, "-partner", addr, "-call-timeout", callTimeout.String()}
	if c.SessionTimeout > 0 {
		args = append(args, "-session-timeout", c.SessionTimeout.String())
	}
	if c.Park {
		args = append(args, "-park")
	}
	return args
}

// Child is one courier process, the subcommand `courier` of retry-topics:
// it runs a Courier (with the idempotency key) until SIGTERM or Ctrl-C and
// writes its reports to stdout, one JSON line each. It exists to be killed:
// a test kills it with SIGKILL at random points and starts it again. A
// failure is one line on stderr, exit 1; a bad flag exit 2.
func Child(program string, args []string) {
	name := program + " courier"
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	var c Courier
	var addr, retries string
	var callTimeout time.Duration
	fs.StringVar(&c.Topics.Orders, "orders", courier.Orders, "the orders topic")
	fs.StringVar(&retries, "retries", courier.Retry5s+"=2s,"+courier.Retry1m+"=5s", "the retry topics in order, each topic=delay")
	fs.StringVar(&c.Topics.DLT, "dlt", courier.DLT, "the dead-letter topic")
	fs.StringVar(&c.Group, "group", "", "the consumer group")
	fs.StringVar(&addr, "partner", partner.DefaultAddr, "the partner API")
	fs.DurationVar(&callTimeout, "call-timeout", time.Second, "one booking call's bound")
	fs.DurationVar(&c.SessionTimeout, "session-timeout", 0, "the group session timeout (0: kgo's 45s)")
	fs.BoolVar(&c.Park, "park", false, "keep per-order order (see retry-topics -park)")
	fs.Parse(args) //nolint:errcheck // ExitOnError
	var fc brewkit.FlagCheck
	fc.Topic("orders", c.Topics.Orders)
	fc.Topic("dlt", c.Topics.DLT)
	fc.Name("group", c.Group)
	for _, st := range strings.Split(retries, ",") {
		topic, delay, ok := strings.Cut(st, "=")
		d, err := time.ParseDuration(delay)
		if !ok || err != nil || d <= 0 {
			fc.Require(false, "retries", retries, "want topic=delay,topic=delay with delays > 0")
			break
		}
		fc.Topic("retries", topic)
		c.Topics.Retries = append(c.Topics.Retries, Stage{Topic: topic, Delay: d})
	}
	fc.Require(callTimeout > 0, "call-timeout", callTimeout, "must be > 0")
	fc.Require(c.SessionTimeout >= 0, "session-timeout", c.SessionTimeout, "must not be negative")
	fc.ExitOnUsageError(name)

	pc := partner.NewClient(addr)
	pc.Timeout = callTimeout
	c.Booker = courier.Booker{Partner: pc, Idempotent: true}
	var mu sync.Mutex // the reports come from the poll loop and kgo's callbacks
	enc := json.NewEncoder(os.Stdout)
	report := func(r Report) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(r) //nolint:errcheck // the parent reads it
	}
	c.OnAssigned = func() { report(Report{Kind: "assigned"}) }
	c.Say = func(s string) { report(Report{Kind: "progress", Line: s}) }

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
	if _, err := c.Run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
