/* The ledger codec measurement of issue 25 (scripts/ledger-codecs/run): zlib (raw deflate with the
   preset dictionary) and libzstd (the same dictionary as raw content) on LedgerPacking's operation
   streams (ops.py), ratio and CPU per item, every result checked to round trip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>
static unsigned char *dict; static size_t dlen;
static double now(){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec/1e9;}
typedef struct {unsigned char*p;unsigned n;unsigned raw;} item;
int main(int argc,char**argv){
  FILE*f=fopen("dict.bin","rb");dict=malloc(4096);dlen=fread(dict,1,4096,f);fclose(f);
  f=fopen(argv[1],"rb");item*it=malloc(sizeof(item)*300000);int k=0;unsigned h[2];
  while(fread(h,4,2,f)==2){it[k].raw=h[0];it[k].n=h[1];it[k].p=malloc(h[1]);fread(it[k].p,1,h[1],f);k++;}
  int reps=argc>2?atoi(argv[2]):1;
  unsigned long raw=0,ops=0;for(int i=0;i<k;i++){raw+=it[i].raw;ops+=it[i].n;}
  printf("%d items, raw %lu B, ops %lu B (%.1f%% of raw)\n",k,raw,ops,100.0*ops/raw);
  unsigned char*out=malloc(1<<22),*back=malloc(1<<22);
  int zl[]={1,6,9};
  for(int li=0;li<3;li++){int L=zl[li];
    for(int usedict=1;usedict>=0;usedict--){
    z_stream s;memset(&s,0,sizeof s);deflateInit2(&s,L,Z_DEFLATED,-15,9,Z_DEFAULT_STRATEGY);
    z_stream d;memset(&d,0,sizeof d);inflateInit2(&d,-15);
    unsigned long tot=0;double c=0,u=0;
    for(int r=0;r<reps;r++)for(int i=0;i<k;i++){
      double t0=now();deflateReset(&s);if(usedict)deflateSetDictionary(&s,dict,dlen);
      s.next_in=it[i].p;s.avail_in=it[i].n;s.next_out=out;s.avail_out=1<<22;deflate(&s,Z_FINISH);
      unsigned cn=(1<<22)-s.avail_out;double t1=now();
      inflateReset(&d);if(usedict)inflateSetDictionary(&d,dict,dlen);d.next_in=out;d.avail_in=cn;d.next_out=back;d.avail_out=1<<22;
      int rc=inflate(&d,Z_FINISH);double t2=now();
      if(rc!=Z_STREAM_END||memcmp(back,it[i].p,it[i].n)){printf("zlib mismatch\n");return 1;}
      crc32(0,back,it[i].n);
      c+=t1-t0;u+=t2-t1;if(r==0)tot+=cn;}
    printf("zlib   L%-2d dict=%d: %7lu B (%.1f%% of ops, %6.0f B/item) compress %.1f us/item, decompress %.1f us/item\n",L,usedict,tot,100.0*tot/ops,(double)tot/k,1e6*c/k/reps,1e6*u/k/reps);
    deflateEnd(&s);inflateEnd(&d);}}
  int zs[]={1,3,5,6,9,19};
  for(int li=0;li<6;li++){int L=zs[li];
    for(int usedict=1;usedict>=0;usedict--){
    ZSTD_CCtx*cc=ZSTD_createCCtx();ZSTD_DCtx*dc=ZSTD_createDCtx();
    ZSTD_CDict*cd=ZSTD_createCDict(dict,dlen,L);
    ZSTD_DDict*dd=ZSTD_createDDict(dict,dlen);
    ZSTD_CCtx_setParameter(cc,ZSTD_c_compressionLevel,L);
    ZSTD_CCtx_setParameter(cc,ZSTD_c_checksumFlag,0);ZSTD_CCtx_setParameter(cc,ZSTD_c_contentSizeFlag,1);ZSTD_CCtx_setParameter(cc,ZSTD_c_dictIDFlag,0);
    if(usedict)ZSTD_CCtx_refCDict(cc,cd);
    unsigned long tot=0;double c=0,u=0;
    for(int r=0;r<reps;r++)for(int i=0;i<k;i++){
      double t0=now();size_t cn=ZSTD_compress2(cc,out,1<<22,it[i].p,it[i].n);double t1=now();
      size_t bn=usedict?ZSTD_decompress_usingDDict(dc,back,1<<22,out,cn,dd):ZSTD_decompressDCtx(dc,back,1<<22,out,cn);double t2=now();
      if(ZSTD_isError(cn)||bn!=it[i].n||memcmp(back,it[i].p,bn)){printf("zstd mismatch %s\n",ZSTD_getErrorName(cn));return 1;}
      c+=t1-t0;u+=t2-t1;if(r==0)tot+=cn;}
    printf("zstd   L%-2d dict=%d: %7lu B (%.1f%% of ops, %6.0f B/item) compress %.1f us/item, decompress %.1f us/item\n",L,usedict,tot,100.0*tot/ops,(double)tot/k,1e6*c/k/reps,1e6*u/k/reps);
    }}
  return 0;}
