package stand

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strings"
)

// serviceCheck is one service's line of `make doctor`: whether what it needs
// is installed (or how the first start installs it), and whether its port is
// free, held by the service itself, or by someone else.
func (s *Stand) serviceCheck(ctx context.Context, svc Service) Check {
	c := Check{Name: svc.Name, Status: "ok"}
	ok, how := svc.host(s).installed()
	parts := []string{how}
	if ok {
		parts[0] = "installed: " + how
	} else if problem, fix := s.installProblem(ctx, svc); problem != "" {
		c.Status, c.Fix = "warn", fix
		parts[0] = how + ", but " + problem
	}
	if svc.Name == postgresService.Name {
		if problem, fix := s.postgresCanEnter(); problem != "" {
			c.Status, c.Fix = "warn", fix
			parts = append(parts, problem)
		}
	}
	port, fix := s.servicePort(svc)
	parts = append(parts, port)
	if fix != "" {
		c.Status, c.Fix = "warn", fix
	}
	c.Detail = strings.Join(parts, "; ")
	return c
}

// installProblem says why the first start could not install what svc needs
// here, and what to do.
func (s *Stand) installProblem(ctx context.Context, svc Service) (problem, fix string) {
	if svc.Name == connectService.Name {
		if err := javaAndMaven(ctx); err != nil {
			return err.Error(), "install a JDK 17+ and Maven (Debian: apt install openjdk-17-jdk-headless maven)"
		}
		return "", ""
	}
	pkg := map[string]string{"postgres": "postgresql", "prometheus": "prometheus"}[svc.Name]
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "this machine has no apt-get", "install " + pkg + " with this machine's package manager"
	}
	if os.Geteuid() != 0 {
		return "installing it needs root", "sudo apt-get install " + pkg
	}
	return "", ""
}

// servicePort judges svc's port: free, the service's own, or someone else's.
func (s *Stand) servicePort(svc Service) (detail, fix string) {
	who := s.portHolder(svc.Port)
	switch {
	case who == "":
		return fmt.Sprintf("port %d free", svc.Port), ""
	case isRunning(s.process(svc)):
		_, detail := s.process(svc).running()
		return fmt.Sprintf("port %d: %s is running (%s)", svc.Port, svc.Name, detail), ""
	}
	return fmt.Sprintf("port %d held by a process this checkout did not start: %s", svc.Port, who),
		fmt.Sprintf("stop it before `make services-up S=%s`", svc.Name)
}

// postgresCanEnter checks, when the stand runs as root (PostgreSQL then runs
// as the postgres user), that this user can reach the service's folder.
func (s *Stand) postgresCanEnter() (problem, fix string) {
	if os.Geteuid() != 0 {
		return "", ""
	}
	uid, gid, groups := -1, uint32(1<<32-1), []uint32(nil) // a user yet to be created: "others"
	if u, err := user.Lookup(pgUser); err == nil {
		c := credential(u)
		uid, gid, groups = int(c.Uid), c.Gid, c.Groups
	}
	if err := traversable(s.Root, uid, gid, groups); err != nil {
		return "PostgreSQL runs as the user " + pgUser + " (it refuses root), and " + err.Error(),
			"make every folder above the checkout enterable by others (chmod o+x), or clone it under /srv or /opt"
	}
	return "", ""
}
