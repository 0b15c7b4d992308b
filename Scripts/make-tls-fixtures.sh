#!/usr/bin/env bash
# Regenerates the TLS test fixtures in Tests/LupineTests/Resources/TLS with openssl.
#
# The generated files are committed: tests never run this script. Run it again only to change
# the fixtures (every certificate and key changes, so pins written into tests change too).
#
#   ca.pem / ca.der / ca-key.pem       the test CA (100 years)
#   leaf.pem / leaf-key.pem / leaf.der  server certificate for 127.0.0.1, ::1 and localhost, signed by the CA
#   chain.pem                           leaf followed by the CA, as the server presents it
#   expired.pem / expired-key.pem       server certificate for the same names, signed by the CA, expired in 2001
#   wronghost.pem / wronghost-key.pem   server certificate for wrong.example only, signed by the CA
#   selfsigned.pem / selfsigned-key.pem self-signed server certificate for 127.0.0.1 and localhost
#   client.pem / client-key.pem         client certificate (CN lupine-client) signed by the CA
#   client.p12                          the client certificate and key, passphrase "lupine"
set -euo pipefail
cd "$(dirname "$0")/../Tests/LupineTests/Resources/TLS"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$work/$1.sec1"; openssl pkcs8 -topk8 -nocrypt -in "$work/$1.sec1" -out "$1"; }

# The CA.
newkey ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days 36500 -subj "/CN=Lupine Test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.pem
openssl x509 -in ca.pem -outform DER -out ca.der

# Server and client certificates signed by the CA through `openssl ca`, which can set any dates.
mkdir -p "$work/db/new"
: > "$work/db/index.txt"
echo 1000 > "$work/db/serial"
cat > "$work/ca.cnf" <<CNF
[ca]
default_ca = test_ca
[test_ca]
dir = $work/db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir/new
certificate = $PWD/ca.pem
private_key = $PWD/ca-key.pem
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
[any_policy]
commonName = supplied
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = \$ENV::SAN
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
CNF

sign() { # name subject extensions san startdate enddate
    newkey "$1-key.pem"
    openssl req -new -key "$1-key.pem" -subj "$2" -out "$work/$1.csr"
    SAN="$4" openssl ca -batch -config "$work/ca.cnf" -extensions "$3" -startdate "$5" -enddate "$6" \
        -in "$work/$1.csr" -out "$work/$1.full" -notext 2>/dev/null
    openssl x509 -in "$work/$1.full" -out "$1.pem"
}
sign leaf "/CN=localhost" server "DNS:localhost,IP:127.0.0.1,IP:::1" 20250101000000Z 21241231000000Z
sign expired "/CN=localhost" server "DNS:localhost,IP:127.0.0.1,IP:::1" 20000101000000Z 20010101000000Z
sign wronghost "/CN=wrong.example" server "DNS:wrong.example" 20250101000000Z 21241231000000Z
SAN=unused sign client "/CN=lupine-client" client "DNS:unused" 20250101000000Z 21241231000000Z
openssl x509 -in leaf.pem -outform DER -out leaf.der
cat leaf.pem ca.pem > chain.pem

# A self-signed server certificate.
newkey selfsigned-key.pem
openssl req -x509 -new -key selfsigned-key.pem -sha256 -days 36500 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -out selfsigned.pem

# The client identity as PKCS#12 (PBES2/AES, which BoringSSL reads).
openssl pkcs12 -export -in client.pem -inkey client-key.pem -certfile ca.pem -name lupine-client \
    -passout pass:lupine -out client.p12
echo "TLS fixtures written to $PWD"
