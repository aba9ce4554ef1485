# Rebuilds LedgerPacking's operation stream (the bytes the codec compresses) for each input (a file,
# or each line of an .ndjson file), the way Sources/StoreSQL/LedgerPacking.swift scans it; writes
# records of (raw length, ops length, ops) for measure.c. Part of scripts/ledger-codecs/run (issue 25).
import sys, base64, re, os, struct
MIN=64; MAXD=4
def dec(s):
    if len(s)==0 or len(s)%4==1: return None
    try:
        b=base64.urlsafe_b64decode(s+b'='*(-len(s)%4))
    except Exception: return None
    if base64.urlsafe_b64encode(b).rstrip(b'=')!=s: return None
    return b
def varint(v):
    o=bytearray()
    while v>=0x80: o.append((v&0x7f)|0x80); v>>=7
    o.append(v); return bytes(o)
class W:
    def __init__(s): s.ops=bytearray(); s.chains=[]
    def lit(s,b):
        if b: s.ops+=b'\x01'+varint(len(b))+b
    def jws(s,t,depth):
        parts=t.split(b'.')
        if len(parts)!=3 or not all(parts): return False
        d=[dec(p) for p in parts]
        if any(x is None for x in d): return False
        s.ops+=b'\x03'
        m=re.search(rb'"x5c"[\s:]*\[',d[0])
        if m and b']' in d[0][m.end():]:
            e=d[0].index(b']',m.end()); ch=d[0][m.end():e]
            if ch not in s.chains: s.chains.append(ch)
            s.lit(d[0][:m.end()]); s.ops+=b'\x02'+varint(s.chains.index(ch)); s.lit(d[0][e:])
        else: s.lit(d[0])
        s.ops+=b'\x04\x01\x01.\x03'; s.strings(d[1],depth); s.ops+=b'\x04\x01\x01.\x03'; s.lit(d[2]); s.ops+=b'\x04'
        return True
    def strings(s,t,depth):
        start=0;i=0;n=len(t)
        while i<n:
            if t[i]!=34: i+=1; continue
            j=i+1;plain=True
            while j<n and t[j]!=34:
                if t[j]==92: plain=False; j+=1
                j+=1
            if j>=n: break
            c=t[i+1:j]
            if plain and depth<MAXD and len(c)>=MIN:
                mark=len(s.ops); cm=len(s.chains)
                s.lit(t[start:i+1])
                if s.jws(c,depth+1): start=j
                else: del s.ops[mark:]; del s.chains[cm:]
            i=j+1
        s.lit(t[start:])
    def scan(s,t):
        tr=t.strip(b' \t\r\n')
        if len(tr)>=MIN:
            lo=len(t)-len(t.lstrip(b' \t\r\n'))
            mark=len(s.ops)
            s.lit(t[:lo])
            if s.jws(tr,1): s.lit(t[lo+len(tr):]); return
            del s.ops[mark:]; s.chains=[]
        s.strings(t,0)
out=open(sys.argv[1],'wb')
items=[]
for f in sys.argv[2:]:
    data=open(f,'rb').read()
    if f.endswith('.ndjson'): items+= [l for l in data.split(b'\n') if l]
    else: items.append(data)
for it in items:
    w=W(); w.scan(it)
    out.write(struct.pack('<II',len(it),len(w.ops))+bytes(w.ops))
print(len(items),'items', sum(len(i) for i in items),'raw bytes', file=sys.stderr)
