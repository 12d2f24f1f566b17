package brewkit

import "context"

// NodeControl stops, starts, pauses and resumes nodes of the course cluster.
// stand.Stand provides it for whichever stand is up, and
// sim.Cluster.NodeControl for the in-process simulation.
type NodeControl interface {
	StopNode(ctx context.Context, n int, kill bool) error
	StartNode(ctx context.Context, n int) error
	// PauseNode freezes a node (a GC pause, a frozen VM): it keeps its
	// connections and answers nothing until ResumeNode.
	PauseNode(ctx context.Context, n int) error
	ResumeNode(ctx context.Context, n int) error
}
