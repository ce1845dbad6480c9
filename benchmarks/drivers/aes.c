/* Drives OpenSSL's aes_core.c on its public AES API: the FIPS-197 appendix C vectors for
   128-, 192- and 256-bit keys, key set-up errors, and 4,000 rounds of encryption chained
   through decryption with every key length; prints each result in hex so that two builds
   can be compared by output. */
#include <stdio.h>
#include <string.h>
#include <openssl/aes.h>

static void hex(const char *what, const unsigned char *b, int n) {
  printf("%s ", what);
  for (int i = 0; i < n; i++) printf("%02x", b[i]);
  printf("\n");
}

int main(void) {
  unsigned char key[32], in[16], out[16], back[16];
  for (int i = 0; i < 32; i++) key[i] = (unsigned char)i;
  for (int i = 0; i < 16; i++) in[i] = (unsigned char)(i * 0x11);
  AES_KEY enc, dec;
  for (int bits = 128; bits <= 256; bits += 64) {
    printf("set %d: %d %d\n", bits, AES_set_encrypt_key(key, bits, &enc),
           AES_set_decrypt_key(key, bits, &dec));
    AES_encrypt(in, out, &enc);
    hex("encrypt", out, 16);
    AES_decrypt(out, back, &dec);
    hex("decrypt", back, 16);
  }
  printf("errors: %d %d %d %d\n", AES_set_encrypt_key(NULL, 128, &enc),
         AES_set_encrypt_key(key, 100, &enc), AES_set_decrypt_key(key, 0, &dec),
         AES_set_decrypt_key(key, 128, NULL));
  unsigned char block[16];
  memcpy(block, in, 16);
  for (int round = 0; round < 4000; round++) {
    int bits = 128 + 64 * (round % 3);
    key[round % 32] ^= block[round % 16];
    AES_set_encrypt_key(key, bits, &enc);
    AES_set_decrypt_key(key, bits, &dec);
    AES_encrypt(block, out, &enc);
    AES_decrypt(out, back, &dec);
    if (memcmp(back, block, 16) != 0) printf("round %d: decryption differs\n", round);
    memcpy(block, out, 16);
  }
  hex("chained", block, 16);
  hex("key", key, 32);
  return 0;
}
