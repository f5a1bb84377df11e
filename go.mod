module github.com/mcpflight/mcpflight

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	gopkg.in/yaml.v3 v3.0.1
)

require github.com/creack/pty v1.1.24
