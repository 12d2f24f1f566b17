# Brew Kafka course: root targets. `make` alone lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

STAND ?= auto
N ?= 1
L ?= 01
S ?=
BREWSTAND := scripts/brewstand
LECTURE = $(firstword $(wildcard lectures/$(L)-*))

.PHONY: exercise progress help doctor tour reset-lecture dashboard up down status services-up services-down services-status services-logs stop-node start-node pause-node resume-node restore logs reset run test check test-real test-docker test-containers standin-image vet build

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

doctor: ## check this machine (Go, Docker, Java, memory, ports, disk) and the cluster; each problem with its fix
	@$(BREWSTAND) doctor

up: ## start the cluster: make up [STAND=auto|docker|native|embedded]
	@$(BREWSTAND) up -stand $(STAND)

down: ## stop the services beside the cluster, then the cluster (data is kept), and any test tier's instance
	@$(BREWSTAND) down -all

status: ## the stand that is up, each node, the quorum leader, the services
	@$(BREWSTAND) status

services-up: ## start services beside the cluster: make services-up S="postgres connect" (postgres, prometheus, connect)
	@test -n "$(S)" || { echo 'name the services: make services-up S="postgres prometheus connect"' >&2; exit 2; }
	@$(BREWSTAND) services up $(S)

services-down: ## stop services: make services-down [S=postgres] (default: all; data is kept)
	@$(BREWSTAND) services down $(S)

services-status: ## each service that runs or has state: address, process, ready
	@$(BREWSTAND) services status

services-logs: ## recent log of a service: make services-logs S=connect
	@$(BREWSTAND) services logs $(S)

stop-node: ## stop node N: make stop-node N=2 [KILL=1 for SIGKILL]
	@$(BREWSTAND) stop-node $(N)

start-node: ## start node N again: make start-node N=2
	@$(BREWSTAND) start-node $(N)

pause-node: ## freeze node N, a hung broker: make pause-node N=2 (SIGSTOP, docker pause, simulated)
	@$(BREWSTAND) pause-node $(N)

resume-node: ## let a paused node go on: make resume-node N=2
	@$(BREWSTAND) resume-node $(N)

restore: ## resume paused and start stopped nodes (after a drill or a test)
	@$(BREWSTAND) up

logs: ## recent log of node N: make logs N=1
	@$(BREWSTAND) logs $(N)

reset: ## stop the cluster and the services, wipe their data (jars and packages stay)
	@$(BREWSTAND) reset

run: ## run a lecture's main program: make run L=01
	@test -n "$(LECTURE)" || { echo "no lecture $(L): see lectures/" >&2; exit 2; }
	@$(MAKE) --no-print-directory -C $(LECTURE) run

test: ## fast tier: every module's tests on in-process kfake clusters, Go only (75-82 s here once .stand/testbin holds the test binaries; the first run links them: 3 minutes)
	@scripts/test fast

exercise: ## a lecture's graded exercises and their tasks: make exercise L=02 (all lectures: make progress)
	@scripts/exercises list -lecture $(L)

check: ## grade your exercise: make check L=02 EX=partitioner (each of L's without EX). With neither: the code checks .ci/run runs
	@if [ "$(origin L)" != file ] || [ -n "$(EX)" ]; then \
		[ "$(origin L)" != file ] || { echo 'name the lecture too: make check L=02 EX=$(EX)' >&2; exit 2; }; \
		scripts/exercises check -lecture $(L) $(if $(EX),-ex $(EX)); \
	else scripts/test check; fi

progress: ## every graded exercise of the course and its state (passed, failing, not started)
	@scripts/exercises progress

test-real: ## real tier: native stand up, every test on real Kafka, stand down
	@scripts/test real

test-docker: ## docker tier: stand verbs, lectures 01 and 04 whole, every README check, on the docker stand
	@scripts/test docker

test-containers: ## every lecture's smoke tests on a cluster testcontainers-go starts (Docker only)
	@scripts/test containers

standin-image: ## build a local stand-in for the official apache/kafka image where none can be pulled (root)
	@stand/standin/build

vet: ## go vet in every module
	@for m in $$(scripts/modules); do (cd $$m && go vet ./...) || exit 1; done

build: ## go build in every module
	@for m in $$(scripts/modules); do (cd $$m && go build ./...) || exit 1; done

tour: ## walk through a lecture's steps, Enter between them: make tour L=01 [AUTO=1]
	@test -n "$(LECTURE)" || { echo "no lecture $(L): see lectures/" >&2; exit 2; }
	@go run ./stand/cmd/tour $(if $(filter 1,$(AUTO)),-auto) $(LECTURE)

reset-lecture: ## delete a lecture's topics, groups and their configs (and lecture 12's users, ACLs and quotas), to repeat its demos: make reset-lecture L=06
	@test -n "$(LECTURE)" || { echo "no lecture $(L): see lectures/" >&2; exit 2; }
	@$(BREWSTAND) reset-lecture $(LECTURE)

dashboard: ## a live view of the cluster for the projector (plain snapshots when piped)
	@go run ./stand/cmd/dashboard

# Any other target is the lecture's: make quorum-cli L=01
Makefile: ;
%:
	@test -n "$(LECTURE)" || { echo "no lecture $(L): see lectures/" >&2; exit 2; }
	@$(MAKE) --no-print-directory -C $(LECTURE) $@
