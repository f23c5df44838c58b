# GoPBS — build, test and install.
#
#   make build    every binary into ./bin/
#   make test     gofmt, go vet, staticcheck and the whole test suite
#   make demo     build, then start a one-host cluster and run a first job
#   make install  binaries, setuid-root pbs_iff, PBS_HOME and systemd units

GO          ?= go
BIN         := $(CURDIR)/bin
PREFIX      ?= /usr/local
SBINDIR     ?= $(PREFIX)/sbin
BINDIR      ?= $(PREFIX)/bin
PBS_HOME    ?= /var/spool/torque
UNITDIR     ?= /etc/systemd/system
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
STATICCHECK_VERSION := v0.8.2

# Main packages: client commands and tools live in tools/, daemons beside
# their packages.
MAINS := $(shell $(GO) list -f '{{if eq .Name "main"}}{{.Dir}}{{end}}' ./... 2>/dev/null)
DAEMONS := pbs_server pbs_mom pbs_sched

.PHONY: build test test-foreign vet fmt-check staticcheck unit fuzz-smoke install demo clean

build:
	@mkdir -p $(BIN)
	$(if $(strip $(MAINS)),$(GO) build -ldflags '-X gopbs/pbs.SbinDir=$(SBINDIR)' -o $(BIN)/ $(MAINS),@echo "no commands yet")

fmt-check:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@test -x $(STATICCHECK) || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(STATICCHECK) ./...

# The conformance suite runs in its own directory so that go test shows its
# output, which ends with the line "conformance: N scenarios, ...".
unit: build
	$(GO) test -count=1 -timeout 40m $$($(GO) list ./... | grep -v '/compat-tests$$')
	cd compat-tests && $(GO) test -count=1 -timeout 30m

test: fmt-check vet staticcheck unit

install: build
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR)
	for b in $(BIN)/*; do \
		case $$(basename $$b) in \
		pbs_server|pbs_mom|pbs_sched|pbs_iff|momctl|pbsdump|pbsbench) install -m 0755 $$b $(DESTDIR)$(SBINDIR)/ ;; \
		*) install -m 0755 $$b $(DESTDIR)$(BINDIR)/ ;; \
		esac; \
	done
	@if [ -f $(DESTDIR)$(SBINDIR)/pbs_iff ]; then chown root:root $(DESTDIR)$(SBINDIR)/pbs_iff && chmod 4755 $(DESTDIR)$(SBINDIR)/pbs_iff; fi
	install -d $(DESTDIR)$(PBS_HOME)
	install -d -m 0755 $(DESTDIR)$(PBS_HOME)/server_priv $(DESTDIR)$(PBS_HOME)/server_logs \
		$(DESTDIR)$(PBS_HOME)/mom_priv $(DESTDIR)$(PBS_HOME)/mom_logs \
		$(DESTDIR)$(PBS_HOME)/sched_priv $(DESTDIR)$(PBS_HOME)/sched_logs \
		$(DESTDIR)$(PBS_HOME)/server_priv/accounting
	install -d -m 1777 $(DESTDIR)$(PBS_HOME)/spool $(DESTDIR)$(PBS_HOME)/undelivered
	test -f $(DESTDIR)$(PBS_HOME)/server_name || hostname -f > $(DESTDIR)$(PBS_HOME)/server_name
	test -f $(DESTDIR)$(PBS_HOME)/sched_priv/sched_config || \
		install -m 0644 sched/config/sched_config $(DESTDIR)$(PBS_HOME)/sched_priv/sched_config
	install -d $(DESTDIR)$(UNITDIR)
	for d in $(DAEMONS); do \
		sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@PBS_HOME@|$(PBS_HOME)|g' contrib/systemd/$$d.service.in \
			> $(DESTDIR)$(UNITDIR)/$$d.service; \
	done

# The whole suite on a machine that looks foreign to it (contrib/foreign-host.sh):
# another host name, 127.0.0.1 resolving to it, strangers on ports 15001-15004.
test-foreign: build
	./contrib/foreign-host.sh $(MAKE) unit

demo: build
	BIN=$(BIN) ./contrib/demo.sh

clean:
	rm -rf $(BIN)

# The long form of the reliability suite (20 kill rounds, 100k malformed
# requests, 10k idle connections); `make test` runs the short form.
.PHONY: soak
soak: build
	GOPBS_SOAK=1 $(GO) test -count=1 -timeout 60m -v ./reliability/
