# A local stand-in for the official node:24-bookworm-slim, built by .ci/image-checks only when no
# image registry can be reached. Same shape where the service's image relies on it: Debian
# bookworm, the official Node 24 binary in /usr/local/bin, npm, a `node` user and group with
# uid/gid 1000, and the official image's entrypoint (which execs node, so node stays PID 1).
# Not the same: no yarn, and the build machine's CA bundle, without which `npm ci` cannot reach
# the registry through the machine's TLS proxy.
ARG ROOTFS
FROM ${ROOTFS}
COPY node /usr/local/bin/node
ADD npm.tgz /usr/local/lib/node_modules/
COPY docker-entrypoint.sh /usr/local/bin/
COPY ca-certificates.crt /usr/local/share/ca-certificates/build-machine.crt
RUN mv /usr/local/lib/node_modules/package /usr/local/lib/node_modules/npm \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/build-machine.crt
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
