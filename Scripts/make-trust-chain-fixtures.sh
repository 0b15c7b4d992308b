#!/usr/bin/env bash
# Regenerates the certificate chains in Tests/LupineTests/Resources/TLS/chains with openssl: a
# root, two intermediates and leaves of every shape the trust evaluation tests need (the roles
# Alamofire's own ServerTrustEvaluatorTests give its fixtures, with Lupine's own certificates).
#
# The generated files are committed: tests never run this script. Only DER certificates are
# kept (no keys: nothing serves these chains, the tests evaluate them as SecTrust values).
#
#   root-ca.der                       the root (100 years)
#   intermediate-ca1.der, -ca2.der    intermediates signed by the root
#   signed by intermediate 1:
#     wildcard.der                    DNS:*.lupine.example
#     multiple-dns-names.der          DNS:test/blog/www.lupine.example
#     signed-by-ca1.der               DNS:signed-by-ca1.lupine.example
#     dns-name-and-uri.der            DNS:test.lupine.example and URI:https://test.lupine.example
#   signed by intermediate 2:
#     expired.der                     DNS:test.lupine.example, expired in 2001
#     missing-dns-name-and-uri.der    no subjectAltName at all (CN test.lupine.example)
#     signed-by-ca2.der               DNS:signed-by-ca2.lupine.example
#     valid-dns-name.der              DNS:test.lupine.example
#     valid-uri.der                   URI:https://test.lupine.example only
set -euo pipefail
cd "$(dirname "$0")/../Tests/LupineTests/Resources/TLS"
mkdir -p chains
cd chains
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The config reads $SAN in every section; a value is needed even where it is unused.
export SAN=unused

newkey() { openssl ecparam -name prime256v1 -genkey -noout -out "$work/$1.key"; }

cat > "$work/ext.cnf" <<'CNF'
[root]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical,CA:TRUE,pathlen:0
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = $ENV::SAN
[leaf_without_san]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF

newkey root-ca
openssl req -x509 -new -key "$work/root-ca.key" -sha256 -days 36500 -subj "/CN=Lupine Chain Root CA" \
    -config "$work/ext.cnf" -extensions root -out "$work/root-ca.pem"

serial=2000
issue() { # name issuer extensions subject san days|expired
    newkey "$1"
    openssl req -new -key "$work/$1.key" -subj "$4" -out "$work/$1.csr"
    serial=$((serial + 1))
    if [ "$6" = expired ]; then
        # openssl x509 cannot backdate: `openssl ca` with explicit dates does.
        mkdir -p "$work/db/new"; : > "$work/db/index.txt"; echo "$serial" > "$work/db/serial"
        cat > "$work/ca.cnf" <<CNF
[ca]
default_ca = c
[c]
dir = $work/db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir/new
certificate = $work/$2.pem
private_key = $work/$2.key
default_md = sha256
policy = p
unique_subject = no
[p]
commonName = supplied
CNF
        SAN="$5" openssl ca -batch -config "$work/ca.cnf" -extfile "$work/ext.cnf" -extensions "$3" \
            -startdate 20000101000000Z -enddate 20010101000000Z -in "$work/$1.csr" -out "$work/$1.full" -notext 2>/dev/null
        openssl x509 -in "$work/$1.full" -out "$work/$1.pem"
    else
        SAN="$5" openssl x509 -req -in "$work/$1.csr" -CA "$work/$2.pem" -CAkey "$work/$2.key" -set_serial "$serial" \
            -days "$6" -sha256 -extfile "$work/ext.cnf" -extensions "$3" -out "$work/$1.pem"
    fi
}

issue intermediate-ca1 root-ca intermediate "/CN=Lupine Chain Intermediate CA 1" unused 36000
issue intermediate-ca2 root-ca intermediate "/CN=Lupine Chain Intermediate CA 2" unused 36000
issue wildcard intermediate-ca1 leaf "/CN=*.lupine.example" "DNS:*.lupine.example" 36000
issue multiple-dns-names intermediate-ca1 leaf "/CN=test.lupine.example" \
    "DNS:test.lupine.example,DNS:blog.lupine.example,DNS:www.lupine.example" 36000
issue signed-by-ca1 intermediate-ca1 leaf "/CN=signed-by-ca1.lupine.example" "DNS:signed-by-ca1.lupine.example" 36000
issue dns-name-and-uri intermediate-ca1 leaf "/CN=test.lupine.example" \
    "DNS:test.lupine.example,URI:https://test.lupine.example" 36000
issue expired intermediate-ca2 leaf "/CN=test.lupine.example" "DNS:test.lupine.example" expired
issue missing-dns-name-and-uri intermediate-ca2 leaf_without_san "/CN=test.lupine.example" unused 36000
issue signed-by-ca2 intermediate-ca2 leaf "/CN=signed-by-ca2.lupine.example" "DNS:signed-by-ca2.lupine.example" 36000
issue valid-dns-name intermediate-ca2 leaf "/CN=test.lupine.example" "DNS:test.lupine.example" 36000
issue valid-uri intermediate-ca2 leaf "/CN=test.lupine.example" "URI:https://test.lupine.example" 36000

for name in root-ca intermediate-ca1 intermediate-ca2 wildcard multiple-dns-names signed-by-ca1 dns-name-and-uri \
            expired missing-dns-name-and-uri signed-by-ca2 valid-dns-name valid-uri; do
    openssl x509 -in "$work/$name.pem" -outform DER -out "$name.der"
done
echo "Trust chain fixtures written to $PWD"
