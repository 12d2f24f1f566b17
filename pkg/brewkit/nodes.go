package brewkit

import "context"

// Nodes stops and starts nodes of the course cluster. stand.Stand provides it
// for whichever stand is up, and sim.Cluster.Nodes for the in-process simulation.
type Nodes interface {
	StopNode(ctx context.Context, n int, kill bool) error
	StartNode(ctx context.Context, n int) error
}
