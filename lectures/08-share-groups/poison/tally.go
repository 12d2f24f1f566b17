package poison

import "fmt"

// This file is the harness that tallies a run's deliveries: each delivery
// of the poison and the rejected ticket, said as it comes, and how many times
// each other ticket was accepted. The Kafka calls are in poison.go.

// deliver records one delivery and what the barista did with it.
func (r *run) deliver(d Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.delivered {
		// Said once the baristas read: a run whose reads fail says
		// only why.
		r.delivered = true
		r.say(fmt.Sprintf("%d tickets in %s; delivery limit %d; ticket %d fails every barista, ticket %d is rejected",
			r.c.Tickets, r.res.Topic, r.c.Limit, r.c.Poison, r.c.Reject))
	}
	switch d.Ticket {
	case r.c.Poison, r.c.Reject:
		r.res.Deliveries = append(r.res.Deliveries, d)
		r.say(fmt.Sprintf("ticket %d: delivery %d to %s: %s", d.Ticket, d.Count, d.Barista, d.Action))
	default:
		r.accepted[d.Ticket]++
	}
}

// acceptedTickets is how many of the other tickets have been accepted.
func (r *run) acceptedTickets() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.accepted)
}

// tally writes the result: the other tickets accepted, and their
// deliveries beyond the first.
func (r *run) tally() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Accepted = len(r.accepted)
	for _, n := range r.accepted {
		r.res.Redelivered += n - 1
	}
}
