# Sourced, not run: puts k6 on PATH, building it from the Go module proxy when missing (~2 min).
K6_VERSION=v1.8.1
if ! command -v k6 >/dev/null; then
  gobin="$(go env GOPATH)/bin"
  if [ ! -x "$gobin/k6" ]; then
    echo "building k6 $K6_VERSION with go install" >&2
    go install "go.k6.io/k6@$K6_VERSION" >&2
  fi
  export PATH="$gobin:$PATH"
fi
