// The viewer of a raster region (Leaflet), or of a vector region when MapLibre is missing: its
// tile grid. `page` (set before this script) holds the region: id, bounds ([[south, west],
// [north, east]], east past 180 for a region across the antimeridian), tileBounds (where its
// tiles are: the same, or the band of latitudes all round for such a region), tileSize (256 or
// 512 pixels), minzoom, maxzoom, tiles (the XYZ template, none for a grid), attribution
// (sanitized HTML) and words (in the page's language).
(function () {
  const bounds = page.bounds;
  // A 512-pixel tile of zoom z is drawn at the map's zoom z + 1 (it covers at 512 pixels what
  // a 256-pixel tile of zoom z does at 256: Leaflet's zoomOffset), so its zooms shift by one.
  const large = page.tileSize === 512, shift = large ? 1 : 0;
  const minzoom = page.minzoom + shift, maxzoom = page.maxzoom + shift;
  // The region's zoom range bounds the map: a region with tiles from zoom 12 up
  // must not open at zoom 3 over nothing.
  const map = L.map('map', { zoomSnap: 0, minZoom: minzoom, maxZoom: maxzoom + 3, zoomControl: false });
  L.control.zoom({ zoomInTitle: page.words.zoomIn, zoomOutTitle: page.words.zoomOut }).addTo(map);
  map.fitBounds(bounds, { padding: [24, 24] });
  if (map.getZoom() < minzoom) map.setZoom(minzoom);
  if (page.tiles) {
    L.tileLayer(page.tiles, { bounds: page.tileBounds, minZoom: minzoom, maxNativeZoom: maxzoom,
      maxZoom: maxzoom + 3, attribution: page.attribution, tileSize: large ? 512 : 256, zoomOffset: -shift }).addTo(map)
      .on('tileerror', function () { if (window.mapgateLook) window.mapgateLook(); });
  } else {
    // Vector tiles: show the tile grid the region covers and its layers (from TileJSON).
    const Grid = L.GridLayer.extend({ createTile: function (c) {
      const t = document.createElement('div'); t.className = 'grid'; t.textContent = c.z + '/' + c.x + '/' + c.y; return t; } });
    new Grid({ bounds: page.tileBounds, minZoom: page.minzoom, maxNativeZoom: page.maxzoom }).addTo(map);
  }
  fetch('/' + page.id + '.json').then(function (r) { return r.ok ? r.json() : {}; }).then(function (j) {
    const layers = j.vector_layers || [];
    if (layers.length) document.getElementById('layers').textContent = page.words.layers + ' ' + layers.map(function (l) { return l.id; }).join(', ');
  }).catch(function () {});
})();
