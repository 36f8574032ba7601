/* The mbed TLS configuration of the static release build (mk/static.mk).
 *
 * It replaces include/mbedtls/config.h in Debian's mbedtls source before
 * the library is compiled, and is installed under that name with the
 * headers kern and libcurl compile against, so every user of mbed TLS in
 * build/kern-static sees the same structures.
 *
 * What kern needs from mbed TLS, and nothing more:
 *   - SHA-256 (image digests and diff_ids) and Base64 (credentials);
 *   - libcurl's HTTPS client to OCI registries: TLS 1.2, client side only,
 *     ECDHE key exchange (X25519, P-256, P-384) with AES-GCM or
 *     ChaCha20-Poly1305, server certificates verified against the PEM CA
 *     bundle, signed with RSA (PKCS#1 v1.5 or PSS) or ECDSA over SHA-256,
 *     SHA-384 or SHA-512 (SHA-1 only so that the older roots in the
 *     bundle still load; the default certificate profile refuses SHA-1
 *     signatures in a chain).
 * Debian's build enables everything else as well: the server side, DTLS,
 * TLS 1.0 and 1.1, static RSA, DHE and PSK key exchanges, CBC, CCM,
 * Camellia, ARIA, DES, Blowfish, ARC4, MD2/MD4/RIPEMD, PSA crypto,
 * HAVEGE, the self tests, the test certificates, debug output and the
 * error strings. The mbed TLS 2.28 in Debian 12 has no usable TLS 1.3
 * (only an experimental prototype) and libcurl 7.88 uses mbed TLS for
 * TLS 1.2 only, so dropping these loses nothing kern could use.
 *
 * Option names and meanings: include/mbedtls/config.h of the same source.
 */
#ifndef MBEDTLS_CONFIG_H
#define MBEDTLS_CONFIG_H

/* --- system ------------------------------------------------------------ */
#define MBEDTLS_HAVE_ASM		/* bignum inner loops in x86-64 assembly */
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE		/* certificate validity periods are checked */
#define MBEDTLS_FS_IO			/* libcurl loads the CA bundle from a file */
#define MBEDTLS_DEPRECATED_REMOVED
/* No error strings: libcurl puts mbed TLS's text only in its error buffer
 * and verbose log, which kern does not read; curl_easy_strerror(), what
 * kern prints, does not depend on it. A stub keeps the symbol. */
#define MBEDTLS_ERROR_STRERROR_DUMMY

/* --- elliptic curves ----------------------------------------------------- */
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM		/* fast P-256/P-384 reduction: cheap handshakes */
/* No precomputed base-point tables in the binary: the client generates one
 * ephemeral key per handshake. */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0

/* --- TLS ----------------------------------------------------------------- */
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
/* Offered in this order; every registry and CDN in use speaks at least one. */
#define MBEDTLS_SSL_CIPHERSUITES \
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, \
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, \
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, \
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, \
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, \
	MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_SERVER_NAME_INDICATION	/* registries behind shared CDNs need SNI */
#define MBEDTLS_SSL_ALPN
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_SESSION_TICKETS		/* cheaper reconnects to the same host */
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE	/* libcurl's public key pinning reads it */

/* --- certificates ---------------------------------------------------------- */
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
#define MBEDTLS_X509_CHECK_KEY_USAGE
#define MBEDTLS_X509_CHECK_EXTENDED_KEY_USAGE
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PK_WRITE_C		/* libcurl's pinned public key compares DER */
#define MBEDTLS_OID_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECP_C
#define MBEDTLS_BIGNUM_C

/* --- symmetric crypto, hashes, randomness -------------------------------- */
#define MBEDTLS_AES_C
#define MBEDTLS_AESNI_C			/* AES-NI and PCLMULQDQ when the CPU has them */
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA1_C
#define MBEDTLS_SHA256_C		/* full size: kern hashes every layer with it */
#define MBEDTLS_SHA512_C		/* SHA-384 and SHA-512 */
#define MBEDTLS_SHA512_SMALLER		/* only certificates and the entropy pool use it */
#define MBEDTLS_ENTROPY_C		/* getrandom(2) */
#define MBEDTLS_CTR_DRBG_C

#include "mbedtls/check_config.h"

#endif /* MBEDTLS_CONFIG_H */
