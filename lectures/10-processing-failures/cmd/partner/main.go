// Command partner is the courier partner's booking API on 127.0.0.1:18080
// (`make partner`): the neighbour courier-service books every delivery with.
// Its faults are switched on with flags here, or while it runs by the demos
// (PUT /faults); it prints every booking call as it answers it.
package main

import (
	"context"
	"errors"
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

func main() {
	addr := flag.String("addr", partner.DefaultAddr, "where to listen (127.0.0.1 only: the course listens on loopback)")
	latency := flag.Duration("latency", 0, "added to every answer")
	errorRate := flag.Float64("error-rate", 0, "share of booking calls answered 503, 0 to 1")
	outage := flag.Duration("outage", 0, "answer every booking call 503 for this long from the start")
	timeouts := flag.Float64("timeout-after-booking", 0, "share of bookings stored and then not answered, 0 to 1")
	quiet := flag.Bool("quiet", false, "do not print each booking call")
	flag.Parse()
	var fc brewkit.FlagCheck
	fc.Require(*latency >= 0, "latency", *latency, "must not be negative")
	fc.Require(*errorRate >= 0 && *errorRate <= 1, "error-rate", *errorRate, "must be in [0, 1]")
	fc.Require(*outage >= 0, "outage", *outage, "must not be negative")
	fc.Require(*timeouts >= 0 && *timeouts <= 1, "timeout-after-booking", *timeouts, "must be in [0, 1]")
	fc.ExitOnUsageError("partner")

	run, at, err := partner.Listen(*addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "partner: %v (is one running already? `curl -s %s/healthz`)\n", err, "http://"+*addr)
		os.Exit(1)
	}
	run.Server.SetFaults(partner.Faults{Latency: partner.Duration(*latency), ErrorRate: *errorRate,
		OutageFor: partner.Duration(*outage), TimeoutAfterBooking: *timeouts})
	if !*quiet {
		run.Server.Watch = func(e partner.Event) { fmt.Println(describe(e)) }
	}
	fmt.Printf("partner: booking API on http://%s (POST /bookings, GET /bookings, PUT /faults); Ctrl-C stops it\n", at)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	if err := run.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "partner:", err)
	}
	l := run.Server.Log()
	fmt.Printf("partner: stopped after %d calls, %d bookings, %d orders booked twice or more\n",
		l.Calls.Total, len(l.Bookings), len(l.Doubles()))
}

func describe(e partner.Event) string {
	at := time.Now().Format("15:04:05.000")
	switch e.Status {
	case http.StatusCreated:
		return fmt.Sprintf("%s  201 booked    %s  %s", at, e.OrderID, e.Booking)
	case http.StatusOK:
		return fmt.Sprintf("%s  200 again     %s  %s (idempotency key seen: not booked twice)", at, e.OrderID, e.Booking)
	case http.StatusBadRequest:
		return fmt.Sprintf("%s  400 malformed %s", at, e.OrderID)
	case http.StatusServiceUnavailable:
		return fmt.Sprintf("%s  503 refused   %s", at, e.OrderID)
	default:
		return fmt.Sprintf("%s  booked, no answer %s  %s (the caller times out)", at, e.OrderID, e.Booking)
	}
}
