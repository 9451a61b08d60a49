# The web pages (src/astraeus/web/assets/: HTML, JavaScript modules, CSS; no build step), embedded
# in the binary at build time as byte arrays (cmake/embed_web_assets.cmake) and served at / by
# api/http_server.cpp (docs/web.md). Included from the top-level CMakeLists.txt once
# astraeus_service is defined.
file(GLOB_RECURSE ASTRAEUS_WEB_ASSETS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/astraeus/web/assets/*)
set(ASTRAEUS_WEB_GENERATED ${CMAKE_BINARY_DIR}/generated/web_assets_data.cpp)
add_custom_command(OUTPUT ${ASTRAEUS_WEB_GENERATED}
  COMMAND ${CMAKE_COMMAND} -DASSET_DIR=${CMAKE_SOURCE_DIR}/src/astraeus/web/assets
          -DOUT=${ASTRAEUS_WEB_GENERATED} -P ${CMAKE_SOURCE_DIR}/cmake/embed_web_assets.cmake
  DEPENDS ${ASTRAEUS_WEB_ASSETS} ${CMAKE_SOURCE_DIR}/cmake/embed_web_assets.cmake
  COMMENT "Embedding the web pages")
add_library(astraeus_web src/astraeus/web/assets.cpp ${ASTRAEUS_WEB_GENERATED})
target_include_directories(astraeus_web PUBLIC src)
# The read-only views the pages need (GET /v1/whoami, /stalls, /fairness, /runs/{run}/attempts).
target_sources(astraeus_service PRIVATE src/astraeus/service/service_web_api.cpp)
target_link_libraries(astraeus_service PRIVATE astraeus_web)
