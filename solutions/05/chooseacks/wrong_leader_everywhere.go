// A plausible wrong solution of exercise 05/chooseacks: acks=1 for both
// ("the leader wrote it to disk"). A payment is then acknowledged while only
// the leader has it, and a crash before the followers copy it takes the
// payment away. The grader must fail it.
package chooseacks

import "github.com/twmb/franz-go/pkg/kgo"

func PaymentAcks() kgo.Acks { return kgo.LeaderAck() }

func ClickAcks() kgo.Acks { return kgo.LeaderAck() }
