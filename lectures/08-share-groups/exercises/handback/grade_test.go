package handback

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/grade"
)

const (
	tickets   = 12
	brewTime  = 300 * time.Millisecond // a drink in the barista that dies
	killAfter = 2                      // drinks it makes before SIGKILL
	takeTime  = 40 * time.Second       // for it to make them
	restTime  = 45 * time.Second       // for the other barista to finish the rest
	// envChild names the topic and group of the barista process the
	// grader runs and kills (TestChildBarista).
	envChild = "BREW_GRADE_HANDBACK_CHILD"
)

const (
	hintLost  = "accept (AckAccept) a ticket only after brew has made it: the broker hands a dead consumer's unacknowledged tickets to another, and franz-go's next poll accepts whatever the last one left unacknowledged (lecture 08: a barista dies holding tickets)"
	hintServe = "poll until ctx ends and make every record you get (lecture 08: share groups, acknowledgements)"
)

// TestChildBarista is the barista process the grader kills: your Barista,
// with a brew that says on stdout which ticket it takes and makes.
func TestChildBarista(t *testing.T) {
	spec := os.Getenv(envChild)
	if spec == "" {
		t.Skip("the barista process that 08/handback's grader runs and kills")
	}
	topic, group, _ := strings.Cut(spec, ",")
	cfg, err := brewkit.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := brewkit.NewClient(cfg, kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.ShareMaxRecords(4), kgo.ShareMaxRecordsStrict())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	say := func(what string, r *kgo.Record) {
		fmt.Fprintf(os.Stdout, "handback: %s %d %d\n", what, ticketOf(r), r.DeliveryCount())
	}
	err = Barista(context.Background(), cl, func(r *kgo.Record) {
		say("took", r)
		time.Sleep(brewTime)
		say("made", r)
	})
	fmt.Fprintf(os.Stdout, "handback: returned %v\n", err)
}

func ticketOf(r *kgo.Record) int {
	for _, h := range r.Headers {
		if h.Key == "ticket" {
			n, _ := strconv.Atoi(string(h.Value))
			return n
		}
	}
	return 0
}

// line is one thing the barista process said.
type line struct {
	what   string // took, made, returned
	ticket int
	rest   string
}

func TestGrade(t *testing.T) {
	env := grade.Start(t, grade.RealKafka)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := env.FreshTopic(t, "ex-handback", 1)
	group := topic
	adm := env.Admin(t)
	cl := env.Client(t)
	setGroupConfigs(t, ctx, cl, group, map[string]string{"share.auto.offset.reset": "earliest"})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	var recs []*kgo.Record
	for n := 1; n <= tickets; n++ {
		r := brewkit.NewOrder(rng, int64(n), time.Now()).Record(topic)
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "ticket", Value: []byte(strconv.Itoa(n))})
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("writing the tickets: %v", err)
	}

	// Barista-1: your Barista in a process of its own.
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildBarista$", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), envChild+"="+topic+","+group)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the barista process: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // it may be gone already
	lines := make(chan line, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(strings.TrimPrefix(sc.Text(), "handback: "))
			if !strings.HasPrefix(sc.Text(), "handback: ") || len(f) < 2 {
				continue
			}
			n, _ := strconv.Atoi(f[1])
			lines <- line{what: f[0], ticket: n, rest: strings.Join(f[1:], " ")}
		}
	}()
	start := time.Now()
	made := map[int]int{} // by either barista
	first := 0            // drinks barista-1 made
	note := func(l line) {
		switch l.what {
		case "made":
			made[l.ticket]++
			first++
		}
	}
	deadline := time.After(takeTime)
	for first < killAfter {
		select {
		case l, ok := <-lines:
			if !ok || l.what == "returned" {
				why := "ended"
				if ok {
					why = "returned " + l.rest
				}
				grade.Fail(t, hintServe, "Barista %s %s, having made %d tickets, before its context ended", why, after(start), first)
			}
			note(l)
		case <-deadline:
			grade.Fail(t, hintServe, "the barista made %d tickets in %s, where a drink takes %s", first, takeTime, brewTime)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("killing the barista process: %v", err)
	}
	cmd.Wait() //nolint:errcheck // killed
	// What it said before it died.
	for l := range lines {
		note(l)
	}
	killedAt := first

	// Barista-2, the grader's: it makes at once and accepts what it made.
	var mu sync.Mutex
	c2 := env.Client(t, kgo.ShareGroup(group), kgo.ConsumeTopics(topic))
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rctx.Err() == nil {
			fs := c2.PollFetches(rctx)
			for _, r := range fs.Records() {
				mu.Lock()
				made[ticketOf(r)]++
				mu.Unlock()
				r.Ack(kgo.AckAccept)
			}
			c2.FlushAcks(rctx) //nolint:errcheck // the next poll sends them
		}
	}()
	left := int64(-1)
	brewkit.WaitFor(ctx, restTime, 200*time.Millisecond, func() bool { //nolint:errcheck // judged below
		left = lag(ctx, adm, group, topic)
		return left == 0
	})
	stop()
	<-done

	var lost []int
	for n := 1; n <= tickets; n++ {
		if made[n] == 0 {
			lost = append(lost, n)
		}
	}
	switch {
	case len(lost) > 0 && left == 0:
		grade.Fail(t, hintLost, "tickets %v were never made, and the group counts them done: the killed barista had taken them (it made %d drinks before SIGKILL)",
			ints(lost), killedAt)
	case len(lost) > 0:
		grade.Fail(t, hintLost, "tickets %v were never made, and %s after the kill the group still had %d tickets to deliver", ints(lost), restTime, left)
	}
}

// after says how long since start, for people.
func after(start time.Time) string {
	if d := time.Since(start); d >= time.Second {
		return "after " + d.Round(100*time.Millisecond).String()
	}
	return "at once"
}

func ints(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
