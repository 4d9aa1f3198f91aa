#!/bin/sh
# certs.sh NAME... makes deploy/certs/ca.pem (once) and, for each NAME, a
# server certificate NAME.pem / NAME-key.pem signed by it, valid for NAME,
# localhost and 127.0.0.1. Needs openssl. Keep ca-key.pem off the workers.
set -eu
cd "$(dirname "$0")"
mkdir -p certs
umask 077
if [ ! -f certs/ca.pem ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
		-subj "/CN=neuraphage cluster CA" -keyout certs/ca-key.pem -out certs/ca.pem
fi
for name in "$@"; do
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-subj "/CN=$name" -keyout "certs/$name-key.pem" -out "certs/$name.csr"
	printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' "$name" >"certs/$name.ext"
	openssl x509 -req -in "certs/$name.csr" -CA certs/ca.pem -CAkey certs/ca-key.pem -CAcreateserial \
		-days 825 -extfile "certs/$name.ext" -out "certs/$name.pem"
	rm -f "certs/$name.csr" "certs/$name.ext"
done
# The containers run as uid 10001: let it read the certificate and key.
chmod 0644 certs/*.pem
chmod 0600 certs/ca-key.pem
