# Fixture map for the layering check's named rooms (tests/CMakeLists.txt,
# layering_refuses_sideways_room): rooms that name what they use, as src/CMakeLists.txt declares the
# analyses, over a few planted files.
set(STAGES analyses)
set(ALLOWED_analyses analyses)
set(ROOMS_analyses common overview memory gpu_metrics)
set(ROOM_analyses_common common/*)
set(ROOM_analyses_overview overview/*)
set(ROOM_USES_analyses_overview overview common)
set(ROOM_analyses_memory memory/*)
set(ROOM_USES_analyses_memory memory common)
set(ROOM_analyses_gpu_metrics gpu_metrics/*)
set(ROOM_USES_analyses_gpu_metrics gpu_metrics common overview)
