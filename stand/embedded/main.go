// Command brew-embedded is the embedded stand: the course cluster simulated by
// franz-go's kfake on 127.0.0.1:19092-19094, with a control endpoint that stops
// and starts nodes. `make up STAND=embedded` starts it in the background; run it
// in the foreground with `go run ./stand/embedded`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/brew-course/kafka/pkg/brewkit/sim"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

const banner = `+--------------------------------------------------------------------+
| EMBEDDED STAND: a SIMULATION of Kafka (franz-go kfake), not Kafka. |
| Quorum, ISR and min ISR are simulated; see stand/README.md.        |
| For real Kafka 4.4.0: make down && make up STAND=native            |
+--------------------------------------------------------------------+`

func main() {
	data := flag.String("data", ".stand/embedded/data", "directory that keeps topics and records across restarts")
	control := flag.String("control", stand.ControlAddr, "loopback address of the stop-node/start-node endpoint")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: brew-embedded [-data DIR] [-control ADDR]\n\n%s\n\n", banner)
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*data, *control); err != nil {
		fmt.Fprintln(os.Stderr, "brew-embedded:", err)
		os.Exit(1)
	}
}

func run(data, control string) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", control)
	if err != nil {
		return fmt.Errorf("control endpoint %s: %w", control, err)
	}
	c, err := sim.New(sim.Options{
		Ports:   [3]int{stand.ClientPort(1), stand.ClientPort(2), stand.ClientPort(3)},
		DataDir: data,
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer c.Close()

	fmt.Println(banner)
	fmt.Printf("nodes 1, 2, 3 on %v; control on %s; data in %s\n", c.Addrs(), control, data)

	srv := &http.Server{Handler: handler(c), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown below

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Println("stopping; data is saved in", data)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

func handler(c *sim.Cluster) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		st := stand.EmbeddedStatus{Up: map[int]bool{}, Paused: map[int]bool{}}
		for n, up := range c.Up() {
			st.Up[int(n)] = up
		}
		for n := range c.Paused() {
			st.Paused[int(n)] = true
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st) //nolint:errcheck // the client sees a short body
	})
	node := func(do func(int32) error, verb string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n, err := strconv.Atoi(r.PathValue("n"))
			if err == nil {
				err = do(int32(n))
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			}
			fmt.Printf("%s node %d %s\n", time.Now().Format("15:04:05"), n, verb)
			fmt.Fprintf(w, "node %d %s\n", n, verb)
		}
	}
	mux.HandleFunc("POST /nodes/{n}/stop", node(c.StopNode, "stopped"))
	mux.HandleFunc("POST /nodes/{n}/start", node(c.StartNode, "started"))
	mux.HandleFunc("POST /nodes/{n}/pause", node(c.PauseNode, "paused (simulated: its requests wait)"))
	mux.HandleFunc("POST /nodes/{n}/resume", node(c.ResumeNode, "resumed"))
	return mux
}
