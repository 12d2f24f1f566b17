// Package everywhere is how any program of the course reaches a secured
// cluster: with environment variables alone, the ones brewkit.FromEnv reads
// (KAFKA_BOOTSTRAP, KAFKA_SASL_MECHANISM, KAFKA_USERNAME, KAFKA_PASSWORD,
// KAFKA_TLS, KAFKA_TLS_CA, KAFKA_TLS_CERT, KAFKA_TLS_KEY). Its test runs a
// program of every earlier lecture that way on the stand's SECURE listeners,
// and one on MTLS.
package everywhere

import (
	"strings"

	"github.com/brew-course/kafka/lectures/12-security/secure"
	"github.com/brew-course/kafka/pkg/brewkit"
	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// SASL is the environment of a program that logs in on c's SASL_SSL
// listeners as the course's admin (User:brew, SCRAM-SHA-512), trusting the
// course CA. KAFKA_TLS=1 is implied by KAFKA_TLS_CA; a managed cluster whose
// certificate a public CA signed needs KAFKA_TLS=1 instead of a CA file.
func SASL(c secure.Cluster) []string {
	return []string{
		brewkit.EnvBootstrap + "=" + strings.Join(c.SASL, ","),
		brewkit.EnvSASL + "=" + secure.Mechanism,
		brewkit.EnvUser + "=" + stand.AdminUser,
		brewkit.EnvPassword + "=" + stand.AdminPassword,
		brewkit.EnvTLSCA + "=" + c.TLS.CA,
	}
}

// MTLS is the environment of a program that logs in on c's mutual-TLS
// listeners with the course admin's client certificate (CN=brew: User:brew).
func MTLS(c secure.Cluster) []string {
	return []string{
		brewkit.EnvBootstrap + "=" + strings.Join(c.MTLS, ","),
		brewkit.EnvTLSCA + "=" + c.TLS.CA,
		brewkit.EnvTLSCert + "=" + c.TLS.Admin,
		brewkit.EnvTLSKey + "=" + c.TLS.AdminKey,
	}
}

// Environ is base without any KAFKA_ variable, then env: what a program
// started with env sees, whatever the shell that started the test had set.
func Environ(base, env []string) []string {
	var out []string
	for _, kv := range base {
		if !strings.HasPrefix(kv, "KAFKA_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}
