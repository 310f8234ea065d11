# Writes PyTorch memory snapshots whose truth is known from the program (torch.cuda's own counters),
# to check `sightline analyze snapshot.pickle` (docs/formats/torch_snapshot.md, "On our H200").
# Run twice (the allocator's settings are read once per process), as on the H200 that wrote
# tests/data/torch_snapshot/h200_{plain,exp}.pickle and their .truth.json:
#   OUT=DIR python3 examples/gpu_memory/snapshot_truth.py
#   OUT=DIR PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python3 examples/gpu_memory/snapshot_truth.py
# Kept compact on purpose: it was sent to the GPU machine inline. What it does: 64 MiB kept to the
# end; four steps, each a growing buffer (32..80 MiB, new segments), a 4 MiB randn and its matmul
# (the first matmul also allocates cuBLAS's 32 MiB workspace, which stays); a 48 MiB tensor used on a
# side stream (record_stream: its free waits for the stream); synchronize, 8 MiB, empty_cache (the
# segments no longer used go back to CUDA), then 128 MiB: the peak.
import json,os,sys,torch
M=1<<20;o=os.environ["OUT"];m="exp" if "expandable" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF","") else "plain"
torch.cuda.init();torch.cuda.memory._record_memory_history(max_entries=100000);d="cuda"
k=torch.empty(64*M,dtype=torch.uint8,device=d)
for s in range(4):
 a=torch.empty((32+16*s)*M,dtype=torch.uint8,device=d);b=torch.randn(1024,1024,device=d);c=b@b;del a,b,c
st=torch.cuda.Stream();x=torch.empty(48*M,dtype=torch.uint8,device=d)
with torch.cuda.stream(st):
 torch.cuda._sleep(10000000);x.fill_(1)
x.record_stream(st);del x
p1=torch.cuda.max_memory_allocated();r1=torch.cuda.max_memory_reserved();torch.cuda.synchronize()
y=torch.empty(8*M,dtype=torch.uint8,device=d);torch.cuda.empty_cache();z=torch.empty(128*M,dtype=torch.uint8,device=d)
t=dict(mode=m,torch=torch.__version__,max_alloc=torch.cuda.max_memory_allocated(),max_res=torch.cuda.max_memory_reserved(),alloc_dump=torch.cuda.memory_allocated(),res_dump=torch.cuda.memory_reserved(),max_alloc_pre_ec=p1,max_res_pre_ec=r1)
torch.cuda.memory._dump_snapshot(f"{o}/snapshot_{m}.pickle");json.dump(t,open(f"{o}/snapshot_{m}.truth.json","w"));print(t)
