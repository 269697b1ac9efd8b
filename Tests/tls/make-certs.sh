#!/usr/bin/env bash
# A throwaway CA and the server certificates it signs, for the TLS tests and `make run-tls`:
#   ca.pem/ca.key            the CA (set it as `ca_file`)
#   right.pem/right.key      127.0.0.1 and localhost, valid 30 days
#   wrong.pem/wrong.key      another host name (other.invalid)
#   expired.pem/expired.key  127.0.0.1 and localhost, valid for one day in 2024
# Usage: make-certs.sh DIR (made if missing; an existing complete set is kept).
set -euo pipefail
dir=${1:?usage: make-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
# A set made before is kept while the CA and the server certificates have a day left (they last 30).
if [ -s ca.pem ] && [ -s right.pem ] && [ -s wrong.pem ] && [ -s expired.pem ] \
   && openssl x509 -checkend 86400 -noout -in ca.pem >/dev/null && openssl x509 -checkend 86400 -noout -in right.pem >/dev/null; then
  exit 0
fi
rm -rf ca-db ./*.pem ./*.key ./*.csr ./*.ext ca.srl ca.cnf

ssl() { openssl "$@" 2>/dev/null; }
ssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj "/CN=reiterate throwaway CA"
request() {  # name, subjectAltName
  ssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1"
  printf 'subjectAltName=%s\n' "$2" > "$1.ext"
}
for pair in "right IP:127.0.0.1,DNS:localhost" "wrong DNS:other.invalid"; do
  set -- $pair
  request "$1" "$2"
  ssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 30 -extfile "$1.ext"
done
# openssl 3.0's x509 cannot backdate: `openssl ca` with explicit dates can.
request expired "IP:127.0.0.1,DNS:localhost"
mkdir -p ca-db
: > ca-db/index.txt
echo 1000 > ca-db/serial
cat > ca.cnf <<'CNF'
[ca]
default_ca = throwaway
[throwaway]
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = anything
[anything]
commonName = supplied
CNF
ssl ca -batch -config ca.cnf -in expired.csr -out expired.pem -notext \
  -startdate 20240101000000Z -enddate 20240102000000Z -extfile expired.ext
chmod 600 ./*.key
echo "certificates in $dir: ca.pem (the CA), right/wrong/expired .pem/.key"
