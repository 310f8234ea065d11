# Fixture map for the layering check's rooms (tests/CMakeLists.txt, layering_refuses_upward_room):
# the analyses' rooms as src/CMakeLists.txt declares them, over a few planted files.
set(STAGES analyses)
set(ALLOWED_analyses analyses)
set(ROOMS_analyses facts analyses findings registry)
set(ROOM_analyses_facts analysis_context.*)
set(ROOM_analyses_analyses)
set(ROOM_analyses_findings findings/*)
set(ROOM_analyses_registry registry.cc)
