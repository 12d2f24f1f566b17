package secure

// The outside systems lecture 12 lets into the cluster, as SCRAM users, and
// the passwords the lecture's programs give them on the course stand (a
// demo's, not a secret: a real one comes from a vault, never from git).
const (
	// Partner is the courier partner: it reads brew.shipments.v1 in its own
	// group, and nothing else.
	Partner         = "partner"
	PartnerPassword = "partner-secret"
	// Analytics is the analytics contractor: it reads the orders and the
	// payments, and writes nothing.
	Analytics         = "analytics"
	AnalyticsPassword = "analytics-secret"
)

// Principal is user's principal as Kafka's ACLs name it: User:NAME.
func Principal(user string) string { return "User:" + user }
