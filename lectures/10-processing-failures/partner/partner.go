// Package partner is the courier partner's booking API, the neighbour
// courier-service calls for every order: a real HTTP server on 127.0.0.1
// (cmd/partner, port 18080) with faults the demos and tests switch on
// (latency, an error rate, an outage, "timeout after booking"), and a
// booking log that tells how many times each order was booked.
//
//	POST /bookings   {"order_id": ...}, header Idempotency-Key: 201 booked,
//	                 200 the same booking again (key seen), 400 malformed,
//	                 503 outage or error rate
//	GET  /bookings   the booking log (Log)
//	GET  /faults     the faults switched on; PUT /faults switches them (Faults)
//	POST /reset      an empty log, no faults
//	GET  /healthz    200
package partner

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// DefaultAddr is where the course runs the partner (DESIGN.md).
const DefaultAddr = "127.0.0.1:18080"

// Faults are what the partner does wrong, switched on through PUT /faults.
type Faults struct {
	// Latency is added to every answer (rush hour).
	Latency Duration `json:"latency"`
	// ErrorRate is the share of booking calls answered 503, 0 to 1.
	ErrorRate float64 `json:"error_rate"`
	// OutageFor answers every booking call 503 for this long from the moment
	// it is set; OutageUntil is when the outage ends (set by the server).
	OutageFor   Duration  `json:"outage_for,omitempty"`
	OutageUntil time.Time `json:"outage_until,omitzero"`
	// TimeoutAfterBooking is the share of new bookings, 0 to 1, that the
	// partner stores and then does not answer for Hang: the caller's request
	// times out though the booking was made.
	TimeoutAfterBooking float64  `json:"timeout_after_booking"`
	Hang                Duration `json:"hang,omitempty"`
	// Seed makes the error rate and the timeouts repeatable (0: 1).
	Seed uint64 `json:"seed,omitempty"`
}

// Booking is one booking the partner made.
type Booking struct {
	Seq     int       `json:"seq"` // the partner's running number, from 1
	OrderID string    `json:"order_id"`
	ID      string    `json:"booking_id"`
	At      time.Time `json:"at"`
	Key     string    `json:"idempotency_key,omitempty"`
}

// Log is the booking log: every booking made, in order, and the calls.
type Log struct {
	Bookings []Booking `json:"bookings"`
	Calls    Calls     `json:"calls"`
}

// Calls counts booking calls by how they were answered.
type Calls struct {
	Total     int `json:"total"`
	Booked    int `json:"booked"`    // 201
	Replayed  int `json:"replayed"`  // 200: an idempotency key seen before
	Malformed int `json:"malformed"` // 400
	Refused   int `json:"refused"`   // 503
	TimedOut  int `json:"timed_out"` // booked, then not answered
}

// Times returns how many times each order was booked.
func (l Log) Times() map[string]int {
	n := map[string]int{}
	for _, b := range l.Bookings {
		n[b.OrderID]++
	}
	return n
}

// Doubles returns the orders booked more than once, in log order.
func (l Log) Doubles() []string {
	var out []string
	seen := map[string]int{}
	for _, b := range l.Bookings {
		if seen[b.OrderID]++; seen[b.OrderID] == 2 {
			out = append(out, b.OrderID)
		}
	}
	return out
}

// Request is a booking call's body.
type Request struct {
	OrderID string `json:"order_id"`
	ShopID  string `json:"shop_id,omitempty"`
}

// Answer is a booking call's answer.
type Answer struct {
	BookingID string `json:"booking_id,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Server is the partner API. Its zero value is not usable: use New.
type Server struct {
	mu     sync.Mutex
	faults Faults
	rng    *rand.Rand
	log    Log
	byKey  map[string]string // idempotency key -> booking id
	now    func() time.Time
	// Watch, when set, is told of each booking call as it is answered
	// (cmd/partner prints them).
	Watch func(Event)
}

// Event is one booking call, for Watch.
type Event struct {
	OrderID string
	Status  int // 201, 200, 400, 503, or 0: booked and not answered
	Booking string
}

// New returns a partner with an empty log and no faults.
func New() *Server {
	s := &Server{byKey: map[string]string{}, now: time.Now}
	s.setFaults(Faults{})
	return s
}

func (s *Server) setFaults(f Faults) {
	if f.Seed == 0 {
		f.Seed = 1
	}
	if f.OutageFor > 0 {
		f.OutageUntil = s.now().Add(time.Duration(f.OutageFor))
	}
	if f.Hang == 0 {
		f.Hang = Duration(30 * time.Second)
	}
	s.faults = f
	s.rng = rand.New(rand.NewPCG(f.Seed, 0))
}

// SetFaults switches faults on, as PUT /faults does.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setFaults(f)
}

// Log returns a copy of the booking log.
func (s *Server) Log() Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	l.Bookings = append([]Booking(nil), s.log.Bookings...)
	return l
}

// Reset empties the log and switches every fault off.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = Log{}
	s.byKey = map[string]string{}
	s.setFaults(Faults{})
}

// ServeHTTP routes the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/bookings" && r.Method == http.MethodPost:
		s.book(w, r)
	case r.URL.Path == "/bookings" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Log())
	case r.URL.Path == "/faults" && r.Method == http.MethodGet:
		s.mu.Lock()
		f := s.faults
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, f)
	case r.URL.Path == "/faults" && r.Method == http.MethodPut:
		var f Faults
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil || f.ErrorRate < 0 || f.ErrorRate > 1 || f.TimeoutAfterBooking < 0 || f.TimeoutAfterBooking > 1 {
			writeJSON(w, http.StatusBadRequest, Answer{Error: "faults: want JSON with rates in [0, 1]"})
			return
		}
		s.SetFaults(f)
		s.mu.Lock()
		f = s.faults
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, f)
	case r.URL.Path == "/reset" && r.Method == http.MethodPost:
		s.Reset()
		writeJSON(w, http.StatusOK, Answer{})
	case r.URL.Path == "/healthz":
		writeJSON(w, http.StatusOK, Answer{})
	default:
		writeJSON(w, http.StatusNotFound, Answer{Error: "no such call: " + r.Method + " " + r.URL.Path})
	}
}

// book is POST /bookings.
func (s *Server) book(w http.ResponseWriter, r *http.Request) {
	var req Request
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req)
	key := r.Header.Get("Idempotency-Key")

	s.mu.Lock()
	f := s.faults
	s.log.Calls.Total++
	if f.Latency > 0 {
		s.mu.Unlock()
		select {
		case <-time.After(time.Duration(f.Latency)):
		case <-r.Context().Done():
		}
		s.mu.Lock()
	}
	now := s.now()
	switch {
	case err != nil || req.OrderID == "":
		s.log.Calls.Malformed++
		s.mu.Unlock()
		s.tell(Event{OrderID: req.OrderID, Status: http.StatusBadRequest})
		writeJSON(w, http.StatusBadRequest, Answer{Error: "malformed booking: want JSON with an order_id"})
		return
	case now.Before(f.OutageUntil) || (f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate):
		s.log.Calls.Refused++
		s.mu.Unlock()
		s.tell(Event{OrderID: req.OrderID, Status: http.StatusServiceUnavailable})
		writeJSON(w, http.StatusServiceUnavailable, Answer{Error: "partner unavailable, try later"})
		return
	}
	if id, ok := s.byKey[key]; ok && key != "" {
		s.log.Calls.Replayed++
		s.mu.Unlock()
		s.tell(Event{OrderID: req.OrderID, Status: http.StatusOK, Booking: id})
		writeJSON(w, http.StatusOK, Answer{BookingID: id})
		return
	}
	b := Booking{Seq: len(s.log.Bookings) + 1, OrderID: req.OrderID, At: now.UTC(), Key: key}
	b.ID = fmt.Sprintf("bk-%06d", b.Seq)
	s.log.Bookings = append(s.log.Bookings, b)
	if key != "" {
		s.byKey[key] = b.ID
	}
	hang := f.TimeoutAfterBooking > 0 && s.rng.Float64() < f.TimeoutAfterBooking
	if hang {
		s.log.Calls.TimedOut++
	} else {
		s.log.Calls.Booked++
	}
	s.mu.Unlock()
	if hang {
		s.tell(Event{OrderID: req.OrderID, Status: 0, Booking: b.ID})
		select { // booked, and no answer until the caller gives up
		case <-time.After(time.Duration(f.Hang)):
		case <-r.Context().Done():
		}
		return
	}
	s.tell(Event{OrderID: req.OrderID, Status: http.StatusCreated, Booking: b.ID})
	writeJSON(w, http.StatusCreated, Answer{BookingID: b.ID})
}

func (s *Server) tell(e Event) {
	if s.Watch != nil {
		s.Watch(e)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the caller has gone
}

// Duration is a time.Duration that reads and writes JSON as "1.5s".
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"1.5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
