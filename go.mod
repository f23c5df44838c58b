module gopbs

go 1.26.0

require (
	github.com/google/gopacket v1.1.19
	github.com/hashicorp/go-hclog v1.6.3
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.0.0-20190620200207-3b0461eec859 // indirect
)
