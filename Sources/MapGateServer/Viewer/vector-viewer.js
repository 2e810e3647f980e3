// The viewer of a vector region (MapLibre GL JS). `page` (set before this script) holds the
// region: id, bounds ([west, south, east, north]), minzoom, rtlTextPlugin (its URL, when
// installed) and words (in the page's language).
(function () {
  // Arabic, Persian and Hebrew labels shaped and ordered by mapgate's plugin (docs/rtl-text.md):
  // registered before the map, not lazily, so that no label is laid out without it.
  if (page.rtlTextPlugin) maplibregl.setRTLTextPlugin(page.rtlTextPlugin, false).catch(function (e) { console.warn(e); });
  const menu = document.getElementById('style');
  const labels = document.getElementById('labels');
  // The style and label language chosen are in the address (#style=ID&labels=ja): a
  // reload or a shared link keeps them.
  const wanted = (location.hash.match(/[#&]style=([a-z0-9._-]+)/) || [])[1];
  if (menu && wanted) Array.prototype.forEach.call(menu.options, function (o) { if (o.dataset.style === wanted) o.setAttribute('selected', ''); });
  const wantedLabels = (location.hash.match(/[#&]labels=([A-Za-z-]+)/) || [])[1];
  if (wantedLabels) Array.prototype.forEach.call(labels.options, function (o) { if (o.value === wantedLabels) o.setAttribute('selected', ''); });
  function isPublishers() { return !!menu && menu.value.indexOf('/styles/') === 0; }
  function chosenStyle() {
    return isPublishers() ? menu.value : '/' + page.id + '/style.json' + (labels.value ? '?labels=' + labels.value : '');
  }
  function remember() {
    const parts = [];
    if (menu) parts.push('style=' + menu.options[menu.selectedIndex].dataset.style);
    if (labels.value) parts.push('labels=' + labels.value);
    history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    labels.disabled = isPublishers();
  }
  labels.disabled = isPublishers();
  // Padding keeps the labels of features at the region's edges inside the view.
  const map = new maplibregl.Map({ container: 'map', style: chosenStyle(), bounds: page.bounds,
    fitBoundsOptions: { padding: 48 }, attributionControl: { compact: false }, fadeDuration: 0, minZoom: page.minzoom,
    locale: { 'NavigationControl.ZoomIn': page.words.zoomIn, 'NavigationControl.ZoomOut': page.words.zoomOut,
      'AttributionControl.ToggleAttribution': page.words.toggleAttribution } });
  // A tile refused (the gate) or missing (the region removed) is looked into at once.
  map.on('error', function () { if (window.mapgateLook) window.mapgateLook(); });
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-left');
  map.addControl(new maplibregl.ScaleControl(), 'bottom-left');
  if (menu) menu.addEventListener('change', function () {
    map.setStyle(chosenStyle()); map.once('idle', showLegend); remember();
  });
  labels.addEventListener('change', function () {
    map.setStyle(chosenStyle()); map.once('idle', showLegend); remember();
  });
  map.on('load', showLegend);
  function showLegend() {
    const legend = document.getElementById('legend');
    legend.textContent = '';
    const groups = {};
    map.getStyle().layers.forEach(function (layer) {
      const name = layer.metadata && layer.metadata['mapgate:layer'];
      if (!name) return;
      if (!groups[name]) groups[name] = { ids: [], color: layer.paint && (layer.paint['fill-color'] || layer.paint['line-color'] || layer.paint['circle-color']) };
      groups[name].ids.push(layer.id);
    });
    Object.keys(groups).forEach(function (name) {
      const label = document.createElement('label');
      const box = document.createElement('input'); box.type = 'checkbox'; box.checked = true;
      box.addEventListener('change', function () {
        groups[name].ids.forEach(function (id) { map.setLayoutProperty(id, 'visibility', box.checked ? 'visible' : 'none'); });
      });
      const swatch = document.createElement('span'); swatch.className = 'swatch'; swatch.style.background = groups[name].color;
      label.appendChild(box); label.appendChild(swatch); label.appendChild(document.createTextNode(name));
      legend.appendChild(label);
    });
  }
  map.on('mousemove', function (e) {
    const features = map.queryRenderedFeatures(e.point);
    document.getElementById('info').textContent = features.length
      ? features[0].sourceLayer + '\n' + JSON.stringify(features[0].properties, null, 1) : '';
  });
})();
